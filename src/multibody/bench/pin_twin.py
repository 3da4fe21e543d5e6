"""The Pinocchio twin of a model for the benchmarks: ``mb.pinocchio.to_pinocchio_model`` and the
velocity permutation, or None when Pinocchio is not installed (the benchmarks then print our side)."""
from __future__ import annotations

import numpy as np

from ..pinocchio import to_pinocchio_model, to_pinocchio_v


def pinocchio_twin(model):
    """(pin.Model, perm) with v_pin = v[perm], or None when Pinocchio is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    pm = to_pinocchio_model(model)
    return pm, to_pinocchio_v(model, pm, np.arange(model.nv, dtype=float)).astype(int)
