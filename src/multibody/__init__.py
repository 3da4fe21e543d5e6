"""multibody: rigid multibody dynamics — spatial algorithms, symbolic equations of motion, simulation.

>>> import numpy as np, multibody as mb
>>> model = mb.models.auto_tree(5, bf=2)
>>> H = mb.crba(model, np.zeros(model.nq))
>>> H.shape
(5, 5)
"""

from .core import get_num_threads, set_num_threads
from .dynamics import (FDab, FDcrb, FDsparse, HD, ID, Energy, EnerMo, HandC, aba, crba, energy, fd_crb,
                       fd_sparse, forward_dynamics, hand_c, hybrid_dynamics, inverse_dynamics, rnea,
                       rnea_derivatives, aba_derivatives, minv)
from .kinematics import (BodyStates, body_jacobian, body_states, center_of_mass, com_jacobian, com_velocity,
                         forward_kinematics, frame_pose, jdot_qd, point_acceleration, point_jacobian,
                         point_position, point_velocity, rotation_jacobian)
from .dynamics.floating import FDfb, IDfb, fbanim, fbkin, fbkin_forward, fbkin_inverse, fd_fb, id_fb
from .model.builder import ModelBuilder
from .model.configuration import difference, integrate
from .model.joints import JointType
from .model.model import Frame, Geometry, Mimic, Model
from .model.urdf import URDFError, URDFWarning, load_urdf
from .model.mjcf import MJCFError, MJCFWarning, load_mjcf
__all__ = [
    "set_num_threads", "get_num_threads",
    "Model", "ModelBuilder", "view", "JointType", "Frame", "Geometry", "Mimic", "models",
    "load_urdf", "URDFError", "URDFWarning", "load_mjcf", "MJCFError", "MJCFWarning",
    "fd_fb", "FDfb", "id_fb", "IDfb", "fbkin", "fbkin_forward", "fbkin_inverse", "fbanim",
    "integrate", "difference",
    "rnea", "ID", "inverse_dynamics", "crba", "hand_c", "HandC", "aba", "FDab", "forward_dynamics",
    "fd_crb", "FDcrb", "fd_sparse", "FDsparse", "hybrid_dynamics", "HD", "energy", "EnerMo", "Energy",
    "rnea_derivatives", "aba_derivatives", "minv",
    "BodyStates", "body_states", "forward_kinematics", "frame_pose", "point_position", "point_velocity",
    "point_acceleration", "body_jacobian", "point_jacobian", "rotation_jacobian", "jdot_qd",
    "center_of_mass", "com_jacobian", "com_velocity",
    "simulate", "simulate_batch", "TorqueTable", "BatchTrajectory", "impact_map", "joint_wall", "Trajectory", "Event",
    "linearize", "Walker", "PeriodicOrbit", "find_periodic_orbit", "EventRecord", "PD", "SimulationError", "SimulationWarning",
    "fd_gq", "FDgq", "GammaQ", "ConstraintSet", "PointConstraint", "AxisConstraint", "JointCoupling",
    "FunctionConstraint", "JointPath", "ConstraintError", "revolute_closure",
    "gc_pos_vel", "gcPosVel", "gcontact", "contact_parameters", "GroundContact",
]


# Imported on first use, so that `import multibody` stays quick (start-up to the first rnea is a
# benchmark goal): the seed models, the viewer, code generation (SymPy/SymEngine) and simulation
# (SciPy).  name -> the module that defines it (None: the subpackage itself).
_LAZY = {
    "models": None, "view": None, "codegen": None, "simulation": None,
    **dict.fromkeys(["BatchTrajectory", "Event", "EventRecord", "PD", "PeriodicOrbit", "SimulationError",
                     "SimulationWarning", "Trajectory", "Walker", "find_periodic_orbit", "impact_map", "joint_wall",
                     "linearize", "simulate", "simulate_batch", "TorqueTable"], ".simulation"),
    **dict.fromkeys(["AxisConstraint", "ConstraintError", "ConstraintSet", "FDgq", "FunctionConstraint", "GammaQ",
                     "JointCoupling", "JointPath", "PointConstraint", "fd_gq", "revolute_closure"], ".simulation.constraints"),
    **dict.fromkeys(["GroundContact", "contact_parameters", "gc_pos_vel", "gcontact", "gcPosVel"],
                    ".simulation.contact"),
}


def __getattr__(name):
    import importlib

    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    where = _LAZY[name]
    value = importlib.import_module("." + name if where is None else where, __name__)
    if where is not None:
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
