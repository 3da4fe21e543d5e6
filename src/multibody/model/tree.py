"""One way to turn a list of body descriptions into a ``Model``, numeric or symbolic.

A body is a dict: ``name``, ``parent`` (name, index or None for the base), ``joint`` (a
spatial_v2 code ``"Rx" … "Pz"``, or ``"revolute" | "prismatic" | "helical" | "fixed"`` with
``axis`` = ``"x" | "y" | "z"`` or a 3-vector), ``pitch``, ``rotation`` (A_PJ), ``translation``
(P_r_PJ), ``mass``, ``com``, ``inertia`` (about the CoM, body coordinates), ``joint_name``.

Numeric entries go through :class:`multibody.ModelBuilder` (its validation and messages);
when any entry is a SymPy expression the model is built from object arrays, with integral
floats turned into exact integers so that expressions stay clean.
"""
from __future__ import annotations

import numpy as np

from .builder import ModelBuilder
from .joints import JOINT_CODES, JointType
from .model import Model
from .._extras import require

_LETTER_AXES = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}


def _is_symbolic(x) -> bool:
    if isinstance(x, (list, tuple, np.ndarray)):
        return any(_is_symbolic(v) for v in np.asarray(x, dtype=object).ravel())
    mod = type(x).__module__ or ""
    return mod.startswith("sympy")


def _vector3(x) -> bool:
    """Is x a flat sequence of three entries (principal moments)?"""
    try:
        return np.shape(x) == (3,)
    except ValueError:   # ragged: sympy.Matrix says what is wrong with it
        return False


def sympy_entry(x):
    """A model array entry as SymPy; integral floats of a numeric model become exact integers
    (1.0 → 1, 0.0 → 0), so unit axes are recognised as coordinate axes and zeros vanish."""
    sp = require("sympy", "symbolic", "symbolic models")

    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return sp.Integer(int(x))
    return sp.sympify(x)


def _joint(spec):
    """(JointType, axis as a tuple) of a body description."""
    code = spec.get("joint", "revolute")
    axis = spec.get("axis")
    if isinstance(axis, str):
        if axis not in _LETTER_AXES:
            raise ValueError(f"body {spec['name']!r}: axis letter must be x, y or z, got {axis!r}")
        axis = _LETTER_AXES[axis]
    if isinstance(code, JointType):
        return code, tuple(axis) if axis is not None else (0, 0, 1)
    if code not in JOINT_CODES:
        raise ValueError(f"body {spec['name']!r}: unknown joint {code!r}; expected one of {sorted(JOINT_CODES)}")
    jt, default = JOINT_CODES[code]
    if axis is None:
        axis = default if default is not None else (0, 0, 1)
    elif default is not None and code != "H":
        raise ValueError(f"body {spec['name']!r}: joint code {code!r} fixes the axis; use 'revolute'/'prismatic'")
    return jt, tuple(axis)


def build_tree(name: str, bodies, gravity=(0.0, 0.0, -9.81)) -> Model:
    """``Model`` of the body descriptions (symbolic when any entry is a SymPy expression)."""
    if not bodies:
        raise ValueError(f"{name}: no bodies")
    keys = ("axis", "pitch", "rotation", "translation", "mass", "com", "inertia")
    symbolic = _is_symbolic(list(gravity)) or any(
        _is_symbolic(b[k]) if not isinstance(b.get(k), str) else False for b in bodies for k in keys if k in b)
    if not symbolic:
        builder = ModelBuilder(name, gravity=gravity)
        for b in bodies:
            jt, axis = _joint(b)
            builder.add_body(b["name"], b.get("parent"), jt, axis=axis, pitch=float(b.get("pitch", 0.0)),
                             mass=float(b.get("mass", 0.0)), com=b.get("com", (0.0, 0.0, 0.0)),
                             inertia=b.get("inertia"), joint_rotation=b.get("rotation"),
                             joint_translation=b.get("translation", (0.0, 0.0, 0.0)),
                             joint_name=b.get("joint_name"), allow_massless=True)
        return builder.build()
    return _symbolic_tree(name, bodies, gravity)


def _symbolic_tree(name, bodies, gravity) -> Model:
    sp = require("sympy", "symbolic", "symbolic models")

    _exact = sympy_entry
    one, zero = sp.Integer(1), sp.Integer(0)
    eye = [[one if r == c else zero for c in range(3)] for r in range(3)]
    zeros = [[zero] * 3 for _ in range(3)]

    nb = len(bodies)
    obj = lambda shape: np.empty(shape, dtype=object)  # noqa: E731
    jaxis, jpitch, R, t = obj((nb, 3)), obj((nb,)), obj((nb, 3, 3)), obj((nb, 3))
    mass, com, inertia = obj((nb,)), obj((nb, 3)), obj((nb, 3, 3))
    parent, jtype, names, jnames = [], [], [], []
    for i, b in enumerate(bodies):
        nm = b["name"]
        if nm in names:
            raise ValueError(f"{name}: a body named {nm!r} already exists")
        names.append(nm)
        jnames.append(b.get("joint_name") or nm + "_joint")
        p = b.get("parent")
        if p is None or p == -1:
            parent.append(-1)
        elif isinstance(p, str):
            if p not in names[:-1]:
                raise ValueError(f"{name}: body {nm!r} names parent {p!r}, which is not defined before it")
            parent.append(names.index(p))
        else:
            parent.append(int(p))
        jt, axis = _joint(b)
        jtype.append(int(jt))
        jaxis[i] = [_exact(x) for x in axis]
        jpitch[i] = _exact(b.get("pitch", 0))
        rot = b.get("rotation")
        R[i] = np.array(eye if rot is None else
                        [[_exact(x) for x in row] for row in sp.Matrix(rot).tolist()], dtype=object)
        t[i] = [_exact(x) for x in b.get("translation", (0, 0, 0))]
        mass[i] = _exact(b.get("mass", 0))
        com[i] = [_exact(x) for x in b.get("com", (0, 0, 0))]
        inert = b.get("inertia")
        if inert is None:   # (the common cases without sympy.Matrix's parsing: a derivation builds a model each time)
            inertia[i] = np.array(zeros, dtype=object)
        elif _vector3(inert):
            inertia[i] = np.array([[_exact(inert[r]) if r == c else zero for c in range(3)] for r in range(3)],
                                  dtype=object)
        else:
            inert = sp.Matrix(inert)
            if inert.shape == (3, 1) or inert.shape == (1, 3):
                inert = sp.diag(*inert)
            inertia[i] = np.array([[_exact(x) for x in row] for row in inert.tolist()], dtype=object)
    return Model(parent=np.array(parent), jtype=np.array(jtype), jaxis=jaxis, jpitch=jpitch,
                 tree_rotation=R, tree_translation=t, mass=mass, com=com, inertia_com=inertia,
                 gravity=np.array([_exact(x) for x in gravity], dtype=object),
                 body_names=tuple(names), joint_names=tuple(jnames), name=name)
