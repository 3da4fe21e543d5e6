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
``whipple_bicycle``        Meijaard et al. 2007 benchmark bicycle      Model (rolling
                                                                       constraints)
``a01_pendulum``,          IFToMM MBS benchmark A01 – A05              Model (loop closures in
``a02_n_four_bar``,        (models/iftomm.py)                          ``model.constraints``)
``a03_andrews``,
``a04_bricard``,
``a05_flyball_governor``
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
from ..model.seed import SeedInfo, parameters, seed_info
from .opende import double_pendulum, single_pendulum
from .pronue import ra3link, ra3link_prismatic, starleth, support_jacobian
from .lecture_slides import ma23
from .spatial_v2 import auto_tree, floatbase, planar, scissor, singlebody, vee
from .tmt_paper import biped_upper_body, clemens_joint, flapping_flyer
from .gfx import gfx_example
from .elbow import double_elbow
from .disc import rolling_disc
from .bicycle import whipple_bicycle
from .iftomm import a01_pendulum, a02_n_four_bar, a03_andrews, a04_bricard, a05_flyball_governor

__all__ = ["auto_tree", "gfx_example", "planar", "vee", "singlebody", "scissor", "floatbase",
           "ra3link", "ra3link_prismatic", "starleth", "support_jacobian", "ma23",
           "double_pendulum", "single_pendulum", "biped_upper_body", "flapping_flyer", "clemens_joint",
           "double_elbow", "rolling_disc", "whipple_bicycle", "a01_pendulum", "a02_n_four_bar", "a03_andrews",
           "a04_bricard", "a05_flyball_governor",
           "SeedInfo", "seed_info", "parameters"]

