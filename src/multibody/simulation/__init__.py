"""Simulation: integrators, events and impacts, trajectories, batches, linearisation, periodic gaits.

The right-hand side is forward dynamics (``mb.aba``, spatial_v2 ``FDab``) or a ``constraints``
object's constrained accelerations; see :func:`simulate`.

Protocols for the ``constraints`` and ``contact`` arguments of :func:`simulate`:

* ``constraints``: ``accelerations(model, q, qd, tau, f_ext, t=t) -> (qdd (nv,), lam (nc,))`` (with
  its own stabilisation) and ``residual(model, q, qd, t=t) -> (c (nc,), cdot (nc,))``, recorded per
  sample in ``Trajectory.constraint_residual`` (N, 2, nc).  The time is passed when both methods
  accept a keyword ``t`` (time-dependent constraints c(t, q) = 0); objects without it are called
  without the time.
* ``contact``: ``n_states``, ``initial_state(model, q, qd) -> z0`` and
  ``forces(model, q, qd, z) -> (f_ext (nb, 6), zdot (n_states,), info)``; the forces are added
  to the user's ``f_ext``, ``z`` is integrated with the state, ``info["force"]`` is recorded in
  ``Trajectory.contact_forces``.
"""
from .batch import BatchTrajectory, simulate_batch
from .controllers import PD, TorqueTable
from .core import SimulationError, SimulationWarning, simulate
from .events import Event
from .impact import impact_map, joint_wall
from .linearization import linearize
from .walker import PeriodicOrbit, Stride, Walker, find_periodic_orbit, tmt_biped
from .trajectory import EventRecord, Trajectory, model_fingerprint

__all__ = ["linearize", "Walker", "Stride", "PeriodicOrbit", "find_periodic_orbit", "tmt_biped",
           "simulate", "simulate_batch", "BatchTrajectory", "impact_map", "joint_wall", "Trajectory", "EventRecord", "Event", "PD", "TorqueTable", "SimulationError", "SimulationWarning",
           "model_fingerprint"]
