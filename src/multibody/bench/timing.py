"""Timing loops the benchmarks share: the best of repeated runs, and two contenders' loops interleaved.

Every time is what ``clock`` reads (the benches pass ``time.process_time``, the process's CPU time, or
``time.perf_counter`` for ``--wall``).

>>> import time
>>> best(calls(sum, [(range(1000),)] * 10), 3, time.perf_counter) > 0
True
>>> best(lambda: sum(range(1000)), 3, time.perf_counter) > 0
True
>>> (ours, _), (theirs, _) = interleaved(lambda: sum(range(100)), lambda: sum(range(100_000)), 3, 0.0,
...                                      time.perf_counter, 1)
>>> ours < theirs
True
"""
from __future__ import annotations

import numpy as np


def best(fn, repeat, clock):
    """The shortest of ``repeat`` runs of ``fn()`` (seconds by ``clock``); see :func:`resolved`."""
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return resolved(times)


def resolved(times):
    """The shortest of ``times``, or their mean where the shortest read zero: a clock coarser than one
    run (CPU-time clocks tick in milliseconds on some machines) reads 0 for a short run, which is no
    time at all; the mean over many runs still resolves it.

    >>> resolved([3.0, 2.0]), resolved([0.0, 0.002, 0.0, 0.0])
    (2.0, 0.0005)
    """
    shortest = min(times)
    return shortest if shortest > 0 else float(np.mean(times))


def calls(fn, rows):
    """A loop of ``fn(*row)`` over ``rows`` (argument tuples built beforehand), each result dropped as a
    caller's loop would: no Python frame between the loop and the call, so the two sides of a
    single-call row pay the same loop and nothing else."""
    def loop():
        for row in rows:
            fn(*row)
    return loop


def interleaved(ours, theirs, repeat, min_time, clock, n, max_loops=100_000):
    """((best, median) of ``ours``, (best, median) of ``theirs``), seconds per call: loops of ``n``
    calls each, run alternately with the order swapped every pair, so that a slow stretch of a shared
    machine falls on both; as many of each: at least ``repeat``, and until both have had ``min_time``
    seconds (at most ``max_loops``).  One warm-up loop of each first.

    A clock coarser than a loop reads 0 for most loops (CI's CPU-time clock did, and a ratio divided
    by zero); the times are then the mean over the loops (:func:`resolved`).  Simulated, loops of 0.1
    and 0.3 ms under a clock that ticks every millisecond:

    >>> now = [0.0]
    >>> def costs(seconds):
    ...     def run():
    ...         now[0] += seconds
    ...     return run
    >>> coarse_clock = lambda: np.floor(now[0] / 1e-3) * 1e-3
    >>> (ours, _), (theirs, _) = interleaved(costs(1e-4), costs(3e-4), 3, 0.05, coarse_clock, 1)
    >>> round(ours * 1e4, 1), round(theirs * 1e4, 1)
    (1.0, 3.0)
    """
    ours(), theirs()
    t_o, t_p, total = [], [], [0.0, 0.0]
    while len(t_o) < max_loops and (len(t_o) < repeat or min(total) < min_time):
        pair = ((ours, t_o, 0), (theirs, t_p, 1)) if len(t_o) % 2 == 0 else ((theirs, t_p, 1), (ours, t_o, 0))
        for fn, acc, side in pair:
            t = clock()
            fn()
            acc.append(clock() - t)
            total[side] += acc[-1]
    return tuple((resolved(x) / n, (float(np.median(x)) or resolved(x)) / n) for x in (t_o, t_p))
