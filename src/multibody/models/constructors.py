"""Former home of the spatial_v2 constructors and the report's double pendulum, kept so that old
imports keep working: the constructors live in :mod:`.spatial_v2` and :mod:`.opende`."""
from .opende import double_pendulum  # noqa: F401
from .spatial_v2 import auto_tree, floatbase, planar, scissor, singlebody, vee  # noqa: F401

__all__ = ["auto_tree", "planar", "vee", "singlebody", "scissor", "floatbase", "double_pendulum"]
