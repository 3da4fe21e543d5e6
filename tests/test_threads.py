"""Threads: one engine world stepped from several threads, the core's thread count changed while
batches run.  Runs under AddressSanitizer too (make test-asan): before each world had its lock,
three threads stepping one world read workspace memory that another thread's step had freed
(heap-use-after-free in lcp.c after grow() in step.c)."""
import threading

import numpy as np

import multibody as mb
from multibody import engine as E

THREADS = 3


def falling_boxes():
    """Boxes dropped onto a plane and onto each other: the contact count, and with it the
    workspace a step grows, changes from step to step."""
    world = E.World(solver="dantzig")
    world.add_geom(E.Plane((0, 0, 1), 0.0))
    rng = np.random.default_rng(3)
    for k in range(6):
        q = rng.normal(size=4)
        world.add_body(E.Box(0.3, 0.2, 0.15), mass=1.0, position=(0.05 * k, 0.03 * k, 0.2 + 0.25 * k),
                       quaternion=q / np.linalg.norm(q))
    return world


def run_together(jobs):
    """Start every job at once (a barrier), wait for all; re-raise the first failure."""
    barrier = threading.Barrier(len(jobs))
    errors = []

    def go(job):
        try:
            barrier.wait()
            job()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_three_threads_stepping_one_world_take_turns():
    calls, n = 20, 10
    world = falling_boxes()
    world.step()                                     # the C world exists before the threads start
    run_together([lambda: [world._sim.step(world.dt, n) for _ in range(calls)]] * THREADS)
    # steps were serialised whole: the world made every one of them, and, as identical steps commute,
    # ends exactly where one thread making them all ends
    assert world.last_step.step == 1 + THREADS * calls * n
    alone = falling_boxes()
    alone.step()
    alone._sim.step(alone.dt, THREADS * calls * n)
    np.testing.assert_array_equal(world._state, alone._state)


def test_reading_a_world_while_others_step_it():
    world = falling_boxes()
    world.step()
    sim = world._sim
    seen = []

    def read():
        for _ in range(100):
            last = sim.last_step()
            seen.append(len(last["lambda"]))
            sim.collide()
            sim.joint_coords()

    run_together([lambda: sim.step(world.dt, 200), lambda: sim.step(world.dt, 200), read])
    assert len(seen) == 100 and sim.last_step()["step"] == 401


def test_thread_count_changes_while_batches_run():
    model = mb.models.auto_tree(5)
    Q = np.random.default_rng(1).uniform(-1, 1, (2000, model.nq))
    ref = mb.crba(model, Q)
    before = mb.get_num_threads()
    results = []

    def batches():
        for _ in range(5):
            results.append(mb.crba(model, Q))

    def switch():
        for k in range(200):
            mb.set_num_threads(1 + k % 3)

    try:
        run_together([batches, batches, switch])
    finally:
        mb.set_num_threads(before)
    assert len(results) == 10
    for r in results:
        np.testing.assert_array_equal(r, ref)
