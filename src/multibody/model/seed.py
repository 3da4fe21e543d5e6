"""What a built-in model knows about its seed: parameter values, coordinate names, initial state.

Every seed constructor (``ra3link``, ``starleth``, ``double_pendulum`` …) takes its physical
parameters as keyword arguments with the seed's values as defaults, and a ``symbolic`` argument
that decides which of them become SymPy symbols in the returned ``Model``:

* ``False`` (default): numbers everywhere, a numeric ``Model`` the compiled kernels read;
* ``True``: every parameter is ``sympy.Symbol(name, real=True)`` with the seed's name;
* a collection of names: those parameters are symbols, the others numbers;
* a mapping ``{name: expression}``: those parameters become the given SymPy expressions
  (your own symbols), the others numbers.

The numbers, the seed's coordinate names (``q1``, ``qLF_HAA``, ``th1`` …), which dofs carry the
seed's actuators and the seed's initial state are kept in a :class:`SeedInfo` beside the model
(``seed_info(model)``), so ``derive`` names the coordinates as the seed does and
``parameters(model)`` gives the values of the symbols that are in the model — the same symbol
objects, so ``eom.subs(parameters(model))`` substitutes.

SymPy is imported only when a symbolic model is asked for.
"""
from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from .._extras import require

__all__ = ["SeedInfo", "seed_info", "parameters", "Parameters"]


@dataclass(frozen=True)
class SeedInfo:
    """The seed's names and numbers for a built-in model (see the module docstring).

    name         : the seed's name of the mechanism ("RA3Link", "StarlETH" …)
    coordinates  : names of q in the seed's spelling, in the model's dof order
    rates        : names of q̇
    actuators    : names of τ; ``actuated`` the dofs they act on (S selects them)
    values       : every physical parameter by name → its numeric value (the keyword arguments)
    symbols      : parameter name → the SymPy expression the model holds for it (symbolic ones)
    q0, dq0      : the seed's initial state (or None)
    notes        : anything else the seed gives (e.g. StarlETH's foot bodies)
    """

    name: str
    coordinates: tuple[str, ...]
    rates: tuple[str, ...]
    actuators: tuple[str, ...] = ()
    actuated: tuple[int, ...] = ()
    values: Mapping[str, float] = field(default_factory=dict)
    symbols: Mapping[str, Any] = field(default_factory=dict)
    q0: tuple[float, ...] | None = None
    dq0: tuple[float, ...] | None = None
    notes: Mapping[str, Any] = field(default_factory=dict)


_INFO: "weakref.WeakKeyDictionary[Any, SeedInfo]" = weakref.WeakKeyDictionary()


def attach(obj, info: SeedInfo):
    """Remember ``info`` for ``obj`` (a Model or Mechanism built here); returns ``obj``."""
    _INFO[obj] = info
    return obj


def seed_info(obj) -> SeedInfo | None:
    """The :class:`SeedInfo` of a model built by a seed constructor (``None`` for any other).

    Parameters
    ----------
    obj : object
        A Model or Mechanism returned by a ``multibody.models`` constructor (anything else
        gives None, never an error).

    Returns
    -------
    SeedInfo or None
        The seed's name, coordinate, rate and actuator names, parameter values and symbols, and
        initial state.

    Examples
    --------
    >>> import multibody as mb
    >>> mb.models.seed_info(mb.models.ra3link()).coordinates
    ('q1', 'q2', 'q3')
    >>> mb.models.seed_info(mb.models.planar(2)) is None
    True
    """
    try:
        return _INFO.get(obj)
    except TypeError:  # unhashable object: certainly not ours
        return None


def parameters(obj) -> dict:
    """``{symbol: value}`` for every parameter symbol a built-in model holds (empty if numeric).

    The keys are the very symbols in the model, so ``eom.subs(parameters(model))`` substitutes.

    Parameters
    ----------
    obj : Model or Mechanism
        One returned by a seed constructor of ``multibody.models``.

    Returns
    -------
    dict
        sympy.Symbol → float, the numbers the constructor was given for the symbolic parameters.

    Raises
    ------
    TypeError
        ``obj`` is not a Model or Mechanism.
    ValueError
        ``obj`` was not built by a seed constructor (``planar(2)``, a URDF model …).

    Examples
    --------
    >>> import multibody as mb
    >>> model = mb.models.ra3link(symbolic=["m1", "l1"], l1=2.0)
    >>> sorted((str(s), v) for s, v in mb.models.parameters(model).items())
    [('l1', 2.0), ('m1', 1.0)]
    """
    info = seed_info(obj)
    if info is None:
        from .mechanism import Mechanism
        from .model import Model
        if not isinstance(obj, (Model, Mechanism)):
            raise TypeError(f"obj: expected a Model or Mechanism built by multibody.models, got {type(obj).__name__}")
        raise ValueError(f"parameters: {type(obj).__name__} {getattr(obj, 'name', '')!r} was not built by a "
                         "multibody.models seed constructor; give the values yourself")
    return {expr: info.values[name] for name, expr in info.symbols.items()
            if getattr(expr, "is_Symbol", False) and name in info.values}


class Parameters:
    """The physical parameters of one constructor call, numeric or symbolic (see module docstring).

    ``P["m1"]`` is the number or the SymPy expression to put into the model; ``P.sp`` is SymPy
    when any parameter is symbolic, else None; arithmetic helpers (``P.cos``, ``P.sqrt``,
    ``P.rot_z``, ``P.pi``) answer in the same kind.
    """

    def __init__(self, constructor: str, symbolic, values: Mapping[str, float]):
        self.constructor = constructor
        self.values: dict[str, float] = {}
        for name, v in values.items():
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise TypeError(f"{constructor}: parameter {name} must be a number, got {v!r}") from None
            if not math.isfinite(x):
                raise ValueError(f"{constructor}: parameter {name} must be finite, got {v!r}")
            self.values[name] = x
        self.symbols: dict[str, Any] = {}
        if symbolic is False or symbolic is None:
            chosen: dict[str, Any] = {}
        elif symbolic is True:
            chosen = {name: None for name in self.values}
        elif isinstance(symbolic, Mapping):
            chosen = dict(symbolic)
        elif isinstance(symbolic, (str, bytes)) or not hasattr(symbolic, "__iter__"):
            raise TypeError(f"{constructor}: symbolic must be True/False, a collection of parameter names or "
                            f"a mapping name → SymPy expression, got {symbolic!r}")
        else:
            chosen = {name: None for name in symbolic}
        unknown = [k for k in chosen if k not in self.values]
        if unknown:
            raise ValueError(f"{constructor}: symbolic names unknown parameter(s) {unknown}; "
                             f"the parameters are {list(self.values)}")
        self.sp = None
        if chosen:
            sp = require("sympy", "symbolic", "symbolic models")

            self.sp = sp
            for name, expr in chosen.items():
                self.symbols[name] = sp.Symbol(name, real=True) if expr is None else sp.sympify(expr)

    @property
    def symbolic(self) -> bool:
        return self.sp is not None

    def __getitem__(self, name: str):
        if name in self.symbols:
            return self.symbols[name]
        return self.values[name]

    def take(self, *names):
        return tuple(self[n] for n in names)

    # --- arithmetic in the model's kind (exact SymPy when symbolic, floats otherwise) -------
    @property
    def pi(self):
        return self.sp.pi if self.sp else math.pi

    def number(self, x):
        """An exact constant when symbolic (``P.number("1/12")``), a float otherwise."""
        if self.sp:
            return self.sp.Rational(x) if isinstance(x, str) else self.sp.sympify(x)
        from fractions import Fraction

        return float(Fraction(x)) if isinstance(x, str) else float(x)

    def cos(self, x):
        return self.sp.cos(x) if self.sp else math.cos(x)

    def sin(self, x):
        return self.sp.sin(x) if self.sp else math.sin(x)

    def sqrt(self, x):
        return self.sp.sqrt(x) if self.sp else math.sqrt(x)

    def diag(self, *d):
        if self.sp:
            return self.sp.diag(*d)
        return np.diag(np.asarray(d, dtype=float))

    def rot_z(self, a):
        """Rotation about z by ``a`` (A_PJ of a joint frame turned by ``a``)."""
        c, s = self.cos(a), self.sin(a)
        rows = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
        return self.sp.Matrix(rows) if self.sp else np.array(rows, dtype=float)

    def info(self, name, coordinates, rates=None, actuators=(), actuated=(), q0=None, dq0=None,
             notes=None) -> SeedInfo:
        rates = tuple(rates) if rates is not None else tuple("D" + c for c in coordinates)
        return SeedInfo(name=name, coordinates=tuple(coordinates), rates=rates, actuators=tuple(actuators),
                        actuated=tuple(actuated), values=dict(self.values), symbols=dict(self.symbols),
                        q0=None if q0 is None else tuple(float(x) for x in q0),
                        dq0=None if dq0 is None else tuple(float(x) for x in dq0),
                        notes=dict(notes or {}))
