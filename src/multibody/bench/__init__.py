"""Benchmark commands against peers (not imported by the library).

* ``python -m multibody bench`` (:mod:`multibody.bench.core`): latency and batch throughput of
  rnea/crba/aba on two generated trees against a Pinocchio twin, with a latency breakdown;
* ``python -m multibody.bench.urdf`` (:mod:`multibody.bench.urdf`): the same on real robots
  (example-robot-data URDFs) plus the time a new process needs to its first ``rnea`` result.
"""
from .core import main

__all__ = ["main"]
