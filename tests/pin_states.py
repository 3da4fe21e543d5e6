"""Test helpers over ``mb.pinocchio``: a model's Pinocchio twin (``to_pinocchio_model``), our states
in its order and conventions, and random states.  Pinocchio is imported on use, as the library does."""
from __future__ import annotations

import numpy as np

from multibody import pinocchio as conv
from multibody.model.joints import JointType
from multibody.pinocchio import _depth_first as dfs_order, to_pinocchio_model as to_pinocchio  # noqa: F401

_TWINS = {}


def _twin(model):
    """Pinocchio's twin of ``model``, built once per model object (kept alive beside it)."""
    key = id(model)
    if key not in _TWINS or _TWINS[key][0] is not model:
        _TWINS[key] = (model, to_pinocchio(model))
    return _TWINS[key][1]


def q_to_pin(model, q):
    """Our configuration in the twin's joint order and conventions."""
    return conv.to_pinocchio_q(model, _twin(model), q)


def v_perm(model):
    """Index array p with v_pin = v[p] (joints in the twin's order, a free joint's [ω; v] → [v; ω])."""
    return conv.to_pinocchio_v(model, _twin(model), np.arange(model.nv, dtype=float)).astype(int)


def random_state(model, rng):
    """(q, q̇, q̈) with angles in [−π, π], unit quaternions and normal rates."""
    q = []
    for i in range(model.nb):
        jt = JointType(model.jtype[i])
        if jt in (JointType.SPHERICAL, JointType.FREE):
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            q += (list(rng.normal(size=3)) if jt == JointType.FREE else []) + list(quat)
        else:
            q += list(rng.uniform(-np.pi, np.pi, size=model.nq_joint[i]))
    return np.array(q), rng.normal(size=model.nv), rng.normal(size=model.nv)
