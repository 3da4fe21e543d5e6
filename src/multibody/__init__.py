"""multibody: rigid multibody dynamics — spatial algorithms, symbolic equations of motion, simulation.

>>> import numpy as np, multibody as mb
>>> model = mb.models.auto_tree(5, bf=2)
>>> H = mb.crba(model, np.zeros(model.nq))
>>> H.shape
(5, 5)
"""

import importlib as _importlib
import sys as _sys

# The public namespace: one snake_case name per function (and the result and model types), each
# name → the module that defines it.  This one table makes __all__ and drives the imports: every
# module loads on the first use of one of its names (module __getattr__ below), none with the
# package — so `import multibody` costs the table alone, and a first result pays for what it uses:
# ModelBuilder + rnea load the core, the model and dynamics (no lxml, no _io's zipfile/secrets, no
# geometry/actuators/sensors tables).  Start-up to the first rnea is a benchmark goal (issue 37,
# `python -m multibody.bench.urdf --startup-only`); tests/test_core.py holds the import's handshake.
_PUBLIC = {
    **dict.fromkeys(["set_num_threads", "get_num_threads"], ".core"),
    **dict.fromkeys(["rnea", "crba", "hand_c", "aba", "fd_crb", "fd_sparse", "hybrid_dynamics", "energy",
                     "Energy", "rnea_derivatives", "aba_derivatives", "minv"], ".dynamics"),
    **dict.fromkeys(["gravity_compensation_forces", "gravity_compensation_torques"], ".dynamics.gravcomp"),
    **dict.fromkeys(["contacts", "Contacts", "lift_onto_ground"], ".kinematics.contacts"),
    "sensors": ".kinematics.sensors",
    **dict.fromkeys(["contact_forces", "ContactForces"], ".dynamics.contact_forces"),
    **dict.fromkeys(["fd_fb", "id_fb", "fbkin", "fbkin_forward", "fbkin_inverse", "fbanim"], ".dynamics.floating"),
    **dict.fromkeys(["BodyStates", "body_states", "forward_kinematics", "frame_pose", "point_position",
                     "point_velocity", "point_acceleration", "body_jacobian", "point_jacobian", "rotation_jacobian",
                     "jdot_qd", "center_of_mass", "com_jacobian", "com_velocity", "frame_placement", "frame_velocity",
                     "frame_acceleration", "frame_jacobian"], ".kinematics"),
    "ModelBuilder": ".model.builder",
    **dict.fromkeys(["integrate", "difference", "random_configuration"], ".model.configuration"),
    "JointType": ".model.joints",
    **dict.fromkeys(["Model", "Frame", "Geometry", "Mimic", "Keyframe"], ".model.model"),
    **dict.fromkeys(["load_urdf", "URDFError", "URDFWarning"], ".model.urdf"),
    **dict.fromkeys(["load_mjcf", "MJCFError", "MJCFWarning"], ".model.mjcf"),
    **dict.fromkeys(["simulate", "simulate_batch", "TorqueTable", "BatchTrajectory", "impact_map", "joint_wall",
                     "Trajectory", "Event", "linearize", "Walker", "PeriodicOrbit", "find_periodic_orbit",
                     "EventRecord", "PD", "SimulationError", "SimulationWarning"], ".simulation"),
    "fd_gq": ".dynamics.fdgq",
    **dict.fromkeys(["PointConstraint", "AxisConstraint", "JointCoupling", "FunctionConstraint", "WeldConstraint",
                     "TendonCoupling", "JointPath", "VelocityConstraint", "RollingContact"], ".model.constraints"),
    **dict.fromkeys(["GammaQ", "ConstraintSet", "revolute_closure"], ".dynamics.constraints"),
    "ConstraintError": ".errors",
    **dict.fromkeys(["gc_pos_vel", "gcontact", "contact_parameters", "GroundContact", "SceneContact", "HardContact", "gc_fd"],
                    ".simulation.contact"),
}
# subpackages and modules reachable as attributes (mb.sparse, mb.view, …), imported on first use
_SUBMODULES = ("codegen", "dynamics", "engine", "errors", "kinematics", "mjcf", "models", "pinocchio", "simulation",
               "sparse", "spatial", "spatial_v2", "symbolic", "view")
__all__ = sorted(_PUBLIC) + list(_SUBMODULES)
# reachable too, though not in __all__: the two packages `import multibody` used to load with it, so
# mb.core.release_output_memory, mb.core.ResultOverflowError and mb.model stay one attribute away
_LAZY_ALSO = ("core", "model")


def __getattr__(name):
    if name == "__version__":      # read once, on first use (importlib.metadata is slow to load)
        value = globals()[name] = _importlib.import_module("._io", __name__).package_version()
        return value
    if name in _SUBMODULES or name in _LAZY_ALSO:
        value = _importlib.import_module("." + name, __name__)
    elif name in _PUBLIC:
        value = getattr(_importlib.import_module(_PUBLIC[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


def _register_notebook_display():
    """In Jupyter, a Model and a Trajectory display as the viewer page inline (``mb.view.show``).
    Registered by name, so neither the model nor the simulation floor imports the view above it,
    and nothing is imported here unless IPython is already running."""
    ipython = _sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None:
        return
    html = shell.display_formatter.formatters["text/html"]
    show = lambda obj: _importlib.import_module(".view.animation", __name__).notebook_html(obj)  # noqa: E731
    html.for_type_by_name("multibody.model.model", "Model", show)
    html.for_type_by_name("multibody.simulation.trajectory", "Trajectory", show)


_register_notebook_display()
