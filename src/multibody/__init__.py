"""multibody: rigid multibody dynamics — spatial algorithms, symbolic equations of motion, simulation.

>>> import numpy as np, multibody as mb
>>> model = mb.models.auto_tree(5, bf=2)
>>> H = mb.crba(model, np.zeros(model.nq))
>>> H.shape
(5, 5)
"""

from . import models
from .core import get_num_threads, set_num_threads
from . import view
from .dynamics import (FDab, FDcrb, FDsparse, HD, ID, Energy, EnerMo, HandC, aba, crba, energy, fd_crb,
                       fd_sparse, forward_dynamics, hand_c, hybrid_dynamics, inverse_dynamics, rnea)
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
from .simulation import (BatchTrajectory, Event, EventRecord, PD, PeriodicOrbit, SimulationError, SimulationWarning,
                       Trajectory, Walker, find_periodic_orbit, impact_map, joint_wall, linearize, simulate,
                       simulate_batch, TorqueTable)
from .simulation.constraints import (AxisConstraint, ConstraintError, ConstraintSet, FDgq, FunctionConstraint,
                                   GammaQ, JointCoupling, JointPath, PointConstraint, fd_gq, revolute_closure)
from .simulation.contact import GroundContact, contact_parameters, gc_pos_vel, gcontact, gcPosVel

__all__ = [
    "set_num_threads", "get_num_threads",
    "Model", "ModelBuilder", "view", "JointType", "Frame", "Geometry", "Mimic", "models",
    "load_urdf", "URDFError", "URDFWarning", "load_mjcf", "MJCFError", "MJCFWarning",
    "fd_fb", "FDfb", "id_fb", "IDfb", "fbkin", "fbkin_forward", "fbkin_inverse", "fbanim",
    "integrate", "difference",
    "rnea", "ID", "inverse_dynamics", "crba", "hand_c", "HandC", "aba", "FDab", "forward_dynamics",
    "fd_crb", "FDcrb", "fd_sparse", "FDsparse", "hybrid_dynamics", "HD", "energy", "EnerMo", "Energy",
    "BodyStates", "body_states", "forward_kinematics", "frame_pose", "point_position", "point_velocity",
    "point_acceleration", "body_jacobian", "point_jacobian", "rotation_jacobian", "jdot_qd",
    "center_of_mass", "com_jacobian", "com_velocity",
    "simulate", "simulate_batch", "TorqueTable", "BatchTrajectory", "impact_map", "joint_wall", "Trajectory", "Event",
    "linearize", "Walker", "PeriodicOrbit", "find_periodic_orbit", "EventRecord", "PD", "SimulationError", "SimulationWarning",
    "fd_gq", "FDgq", "GammaQ", "ConstraintSet", "PointConstraint", "AxisConstraint", "JointCoupling",
    "FunctionConstraint", "JointPath", "ConstraintError", "revolute_closure",
    "gc_pos_vel", "gcPosVel", "gcontact", "contact_parameters", "GroundContact",
]


def __getattr__(name):  # multibody.codegen loads SymPy/SymEngine: imported on first use
    if name == "codegen":
        import importlib

        return importlib.import_module(".codegen", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
