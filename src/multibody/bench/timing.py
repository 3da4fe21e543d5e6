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
    """The shortest of ``repeat`` runs of ``fn()`` (seconds by ``clock``)."""
    shortest = np.inf
    for _ in range(repeat):
        t = clock()
        fn()
        shortest = min(shortest, clock() - t)
    return shortest


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
    seconds (at most ``max_loops``).  One warm-up loop of each first."""
    ours(), theirs()
    t_o, t_p, total = [], [], [0.0, 0.0]
    while len(t_o) < max_loops and (len(t_o) < repeat or min(total) < min_time):
        pair = ((ours, t_o, 0), (theirs, t_p, 1)) if len(t_o) % 2 == 0 else ((theirs, t_p, 1), (ours, t_o, 0))
        for fn, acc, side in pair:
            t = clock()
            fn()
            acc.append(clock() - t)
            total[side] += acc[-1]
    return tuple((min(x) / n, float(np.median(x)) / n) for x in (t_o, t_p))
