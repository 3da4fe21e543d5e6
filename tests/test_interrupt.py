"""Ctrl-C stops a long World.run between steps (issue 36: it used to wait for the whole run, 59 s
measured). The handshake: a thread sends SIGINT to the main thread while a run that would take
hours is inside C; the run must raise KeyboardInterrupt, with the world whole and its clock
counting exactly the steps taken."""
import _thread
import threading
import time

import numpy as np
import pytest

from multibody import engine as E


def interrupt_soon():
    def send():
        time.sleep(0.3)          # let the run enter C first (a delay, not an assertion on time)
        _thread.interrupt_main()
    threading.Thread(target=send, daemon=True).start()


def test_ctrl_c_stops_world_run_between_steps():
    world = E.World(dt=1e-3)
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    world.add_body(E.Sphere(0.1), mass=1.0, position=(0, 0, 0.5))
    n = 10**10                    # hours of steps: only the interrupt ends this call
    interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        world.run(n)
    steps = world._sim.steps()
    assert 0 < steps < n
    assert world.time == steps * 1e-3                     # the clock counts the steps taken
    assert np.all(np.isfinite(world.bodies[0].position))
    world.run(10)                                          # and the world steps on
    assert world._sim.steps() == steps + 10
