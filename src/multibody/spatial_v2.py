"""Every spatial_v2 function under its seed spelling (seed 001, Featherstone's RBDA toolbox).

``multibody``'s own namespace keeps one snake_case name per function; a reader porting MATLAB
code finds the seed's names here, each the very same object:

>>> import multibody as mb
>>> from multibody import spatial_v2 as sv2
>>> sv2.ID is mb.rnea and sv2.FDab is mb.aba and sv2.HandC is mb.hand_c
True
>>> sorted(n for n in sv2.__all__ if n.startswith("mpy"))
['mpyH', 'mpyL', 'mpyLi', 'mpyLit', 'mpyLt']

Loaded on first use, like the package: naming a model constructor does not load the solvers.
"""
import importlib as _importlib

# seed spelling → (module, multibody's name)
_SEED_NAMES = {
    # dynamics
    "ID": (".dynamics", "rnea"), "FDab": (".dynamics", "aba"), "FDcrb": (".dynamics", "fd_crb"),
    "HandC": (".dynamics", "hand_c"), "HD": (".dynamics", "hybrid_dynamics"), "EnerMo": (".dynamics", "energy"),
    "FDfb": (".dynamics.floating", "fd_fb"), "IDfb": (".dynamics.floating", "id_fb"),
    "fbkin": (".dynamics.floating", "fbkin"), "fbanim": (".dynamics.floating", "fbanim"),
    "jcalc": (".model.joints", "jcalc"),
    "FDgq": (".dynamics.fdgq", "fd_gq"),
    # ground contact (Simulink examples)
    "gcFD": (".simulation.contact", "gc_fd"), "gcPosVel": (".simulation.contact", "gc_pos_vel"),
    "gcontact": (".simulation.contact", "gcontact"),
    # branch-induced sparsity
    "expandLambda": (".sparse", "expand_lambda"), "LTDL": (".sparse", "ltdl"), "LTL": (".sparse", "ltl"),
    "mpyH": (".sparse", "mpy_h"), "mpyL": (".sparse", "mpy_l"), "mpyLt": (".sparse", "mpy_lt"),
    "mpyLi": (".sparse", "mpy_li"), "mpyLit": (".sparse", "mpy_lit"),
    # model constructors
    "autoTree": (".models", "auto_tree"), "floatbase": (".models", "floatbase"), "planar": (".models", "planar"),
    "gfxExample": (".models", "gfx_example"), "vee": (".models", "vee"), "singlebody": (".models", "singlebody"),
    "scissor": (".models", "scissor"), "doubleElbow": (".models", "double_elbow"),
    "rollingdisc": (".models", "rolling_disc"),
    # drawing
    "showmotion": (".view", "showmotion"),
    # spatial vector algebra (multibody.spatial keeps these names too)
    **{name: (".spatial", name) for name in ("rx", "ry", "rz", "rv", "rq", "rqd", "skew", "crm", "crf", "mcI",
                                             "rotx", "roty", "rotz", "xlt", "plnr", "plux", "pluho", "XtoV",
                                             "Xpt", "Vpt", "Fpt")},
}

__all__ = sorted(_SEED_NAMES)


def __getattr__(name):
    if name not in _SEED_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _SEED_NAMES[name]
    value = getattr(_importlib.import_module(module, "multibody"), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
