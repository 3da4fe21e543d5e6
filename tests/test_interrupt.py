"""Ctrl-C stops a long World.run between steps (issue 36: it used to wait for the whole run, 59 s
measured). The handshake: a thread sends SIGINT to the main thread while a run that would take
hours is inside C; the run must raise KeyboardInterrupt, with the world whole and its clock
counting exactly the steps taken."""
import _thread
import signal
import threading
import time

import numpy as np
import pytest

from multibody import engine as E


@pytest.fixture(autouse=True)
def python_handles_sigint():
    """Python's own SIGINT handler for each test: _thread.interrupt_main() does nothing while SIGINT is
    ignored, and a test process can inherit it ignored (a CI worker was found with SIGINT in SigIgn after
    earlier tests: the interrupt never came and World.run(10**10) ran on for hours)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


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


def test_ctrl_c_stops_a_compiled_simulate_run():
    """The compiled loop (csrc/sim/rollout.c) asks every MB_POLL_STEPS steps; it used to run to
    t_final whatever the user pressed."""
    import multibody as mb
    model = mb.models.double_pendulum()
    interrupt_soon()
    with pytest.raises(KeyboardInterrupt):   # about 3 h of steps: only the interrupt ends it
        mb.simulate(model, [0.5, 0.0], [0.0, 0.0], 1e6, dt=1e-4, integrator="rk4", record_every=10**9)
    traj = mb.simulate(model, [0.5, 0.0], [0.0, 0.0], 0.01, dt=1e-3)   # and the next run is whole
    assert len(traj.t) == 11 and np.all(np.isfinite(traj.q))


def test_ctrl_c_stops_every_run_of_a_threaded_batch():
    import multibody as mb
    model = mb.models.double_pendulum()
    q0 = np.tile([0.5, 0.0], (8, 1))
    interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        mb.simulate_batch(model, q0, np.zeros_like(q0), 1e6, dt=1e-4, integrator="rk4", record_every=10**9)


def test_ctrl_c_stops_a_compiled_module_s_run_between_chunks(tmp_path):
    """A generated module's run(n, …) evaluates its states in chunks of 65 536 without the GIL and
    looks at the signals between them.  The handshake: the interrupt is sent once the first state's
    output is written, so the run is inside C; the states of the later chunks stay unwritten."""
    import sympy as sp   # a test dependency ([symbolic] in [test])
    from multibody.codegen import compiled
    from multibody.codegen.spec import make_spec
    x, y = sp.symbols("x y")
    heavy = sp.Matrix([sum(sp.sin(k * x + y) for k in range(1, 200))])   # a few µs a state
    fn = compiled.compile(make_spec({"v": heavy}, {"q": [x, y]}, name="heavy"), name="heavy", cache_dir=tmp_path)
    n = 4 * 65536
    out = np.full(n, -7.0)

    def send_once_running():
        while out[0] == -7.0:
            time.sleep(5e-4)
        _thread.interrupt_main()
    threading.Thread(target=send_once_running, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        fn._run(n, np.array([0.3, 0.1]), 0, out)
    assert out[0] != -7.0 and out[-1] == -7.0
