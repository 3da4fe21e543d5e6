"""Built-in models: spatial_v2 constructors and the seeds' example mechanisms.

The symbolic seed models (proNEu's RA3Link, RA3LinkPrismatic, StarlETH; the TMT paper's biped,
flyer and Clemens joint; the OpenDE report's double pendulum in TMT form) load SymPy, so they are
imported on first use.
"""
from .constructors import auto_tree, double_pendulum, floatbase, planar, scissor, singlebody, vee
from .double_elbow import double_elbow
from .rolling_disc import rolling_disc

autoTree = auto_tree  # spatial_v2 spelling

_LAZY = {
    "ra3link": "pronue", "ra3link_prismatic": "pronue", "starleth": "pronue", "support_jacobian": "pronue",
    "PneSystem": "pronue",
    "double_pendulum_report": "tmt_models", "double_pendulum_report_model": "tmt_models",
    "double_pendulum_report_symbols": "tmt_models", "biped_upper_body": "tmt_models",
    "flapping_flyer": "tmt_models", "clemens_joint": "tmt_models",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["auto_tree", "autoTree", "double_pendulum", "planar", "vee", "singlebody", "scissor", "floatbase",
           "double_elbow", "rolling_disc",
           *_LAZY]
