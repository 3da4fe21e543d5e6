"""Built-in models: spatial_v2's constructors and one constructor per seed mechanism.

=========================  ==========================================  =======================
constructor                seed                                        returns
=========================  ==========================================  =======================
``auto_tree``, ``planar``  spatial_v2 autoTree, planar                 Model
``vee``, ``singlebody``,   spatial_v2 Simulink examples 3–5            Model (free-floating)
``scissor``
``floatbase``              spatial_v2 floatbase                        Model
``ra3link``,               proNEu manual 3.1, 3.2                      Model
``ra3link_prismatic``
``starleth``               proNEu manual 3.3                           Model
``ma23``                   lecture slides, MA 23 coefficient table     Model
``double_pendulum``,       OpenDE report 5.1, D.1 / 6, D.5             Model
``single_pendulum``
``biped_upper_body``,      TMT paper, table 1                          Mechanism (tree Model +
``flapping_flyer``,                                                    constraints, springs,
``clemens_joint``                                                      forces, contacts)
=========================  ==========================================  =======================

The seed constructors take the seed's physical parameters as keyword arguments (seed values as
defaults) and ``symbolic=`` (False, True, a collection of names or a mapping name → expression)
to put SymPy symbols into the model; ``parameters(model)`` gives ``{symbol: value}`` and
``seed_info(model)`` the seed's coordinate names and initial state.

>>> import multibody as mb
>>> from multibody.symbolic import derive
>>> model = mb.models.ra3link(symbolic=True)
>>> eom = derive(model)
>>> float(eom.M.subs(mb.models.parameters(model))[2, 2])
1.25
"""
import warnings

from ._seed import SeedInfo, parameters, seed_info
from .mechanism import Mechanism
from .opende import double_pendulum, single_pendulum
from .pronue import ra3link, ra3link_prismatic, starleth, support_jacobian
from .lecture_slides import ma23
from .spatial_v2 import auto_tree, floatbase, planar, scissor, singlebody, vee
from .tmt_paper import biped_upper_body, clemens_joint, flapping_flyer
from .gfx import gfx_example
from .elbow import double_elbow
from .disc import rolling_disc

autoTree = auto_tree  # spatial_v2 spelling
gfxExample = gfx_example

__all__ = ["auto_tree", "autoTree", "gfx_example", "gfxExample", "planar", "vee", "singlebody", "scissor", "floatbase",
           "ra3link", "ra3link_prismatic", "starleth", "support_jacobian", "ma23",
           "double_pendulum", "single_pendulum", "biped_upper_body", "flapping_flyer", "clemens_joint",
           "double_elbow", "rolling_disc",
           "Mechanism", "SeedInfo", "seed_info", "parameters"]


def _double_pendulum_report_symbols():
    model = double_pendulum(symbolic=True)
    info = seed_info(model)
    import sympy as sp

    q = tuple(sp.Symbol(n, real=True) for n in info.coordinates)
    dq = tuple(sp.Symbol(n, real=True) for n in info.rates)
    return model, q, dq


def _double_pendulum_report_model():
    model, q, dq = _double_pendulum_report_symbols()
    values = parameters(model)
    return model, (q, dq, tuple(values), values)


def _double_pendulum_report():
    from ..symbolic.tmt import tmt_system_from_model

    model, (q, dq, _, values) = _double_pendulum_report_model()
    info = seed_info(model)
    return tmt_system_from_model(model, q=q, dq=dq, actuated=[], values=values, q0=info.q0, dq0=info.dq0,
                                 name="double_pendulum")


def _pne_system_class():
    from ..symbolic.pne import PneSystem

    return PneSystem


# names of the previous API: (replacement, what it returns now)
_MOVED = {
    "double_pendulum_report": ("double_pendulum(symbolic=True) and tmt_system_from_model", _double_pendulum_report),
    "double_pendulum_report_model": ("double_pendulum(symbolic=True)", _double_pendulum_report_model),
    "double_pendulum_report_symbols": ("seed_info(double_pendulum())",
                                       lambda: _double_pendulum_report_symbols()[1:]),
}


def __getattr__(name):
    if name in _MOVED:
        new, fn = _MOVED[name]
        warnings.warn(f"multibody.models.{name} is deprecated; use multibody.models.{new}", DeprecationWarning,
                      stacklevel=2)
        return fn
    if name == "PneSystem":
        warnings.warn("multibody.models.PneSystem moved to multibody.symbolic.PneSystem "
                      "(build one from a model with multibody.symbolic.pne_system)", DeprecationWarning, stacklevel=2)
        return _pne_system_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
