"""Built-in models: spatial_v2 constructors and the seeds' example mechanisms."""
from .constructors import auto_tree, double_pendulum, floatbase, planar, scissor, singlebody, vee

autoTree = auto_tree  # spatial_v2 spelling

__all__ = ["auto_tree", "autoTree", "double_pendulum", "planar", "vee", "singlebody", "scissor", "floatbase"]
