"""``derive(source, method=...)``: symbolic equations of motion from any description the package has.

What ``derive`` takes, and which methods derive from it:

==========================================================  ==================================
source                                                      methods
==========================================================  ==================================
``multibody.Model`` (numeric or with SymPy entries)         "rnea", "pne", "tmt", "lagrange"
``multibody.model.mechanism.Mechanism`` (tree + constraints, forces)  "tmt", "lagrange"
``multibody.symbolic.TMTSystem``                            "tmt", "lagrange"
``multibody.symbolic.PneSystem``, a list of proNEu ``Body``  "pne"
==========================================================  ==================================

Methods
-------
``"rnea"`` (default)  symbolic CRBA + recursive Newton-Euler (slides), :mod:`.rnea_sym`
``"pne"``             projected Newton-Euler (proNEu ``computePNE``), :mod:`.pne`
``"tmt"``             TMT method, :mod:`.tmt`
``"lagrange"``        Lagrange (energies, Christoffel symbols), :mod:`.lagrange`
any name registered with :func:`multibody.symbolic.register_method`

Each method registers itself in :data:`multibody.symbolic.eom.DERIVATION_METHODS` with the input
types it accepts; ``derive`` chooses the symbols (the seed's names for built-in models, see
:func:`~multibody.symbolic.tree.model_symbols`) and calls it. Revolute, prismatic, helical and
fixed joints are derived symbolically; for a floating base use Euler angles (three prismatic and
three revolute joints through massless bodies, as ``multibody.models.starleth`` does).
"""
from __future__ import annotations

import numbers
import time
from functools import singledispatch
from typing import Callable

import sympy as sp

from ..model.model import Model
from ..model.mechanism import Mechanism
from . import rnea_sym as _rnea_sym  # noqa: F401  (registers "rnea"; the order is the table's)
from . import pne_input as _pne_input  # noqa: F401  (registers "pne")
from . import tmt as _tmt  # noqa: F401  (registers "tmt")
from . import lagrange as _lagrange  # noqa: F401  (registers "lagrange")
from .eom import DERIVATION_METHODS, EquationsOfMotion
from .pne_input import PneSystem
from .tmt import TMTSystem
from .tree import model_symbols, one_derivation, symbol_column

__all__ = ["derive", "model_symbols"]


def _accepted() -> str:
    """'Model (rnea, pne, tmt, lagrange), …' from the registry."""
    by_type: dict[str, list[str]] = {}
    for name, entry in DERIVATION_METHODS.items():
        for t in entry.accepts:
            label = "a list of proNEu Body" if t is list else t.__name__
            by_type.setdefault(label, []).append(name)
    return "; ".join(f"{t} ({', '.join(ms)})" for t, ms in by_type.items())


def _describe(source) -> str:
    name = getattr(source, "name", None)
    return type(source).__name__ + (f" {name!r}" if isinstance(name, str) and name else "")


# --- the symbols of each kind of source -------------------------------------------------------
@singledispatch
def _symbols(source, q, dq, tau, actuated):
    raise TypeError(f"derive: cannot derive equations of motion from {_describe(source)}; "
                    f"derive accepts {_accepted()}")


@_symbols.register
def _(source: Model, q, dq, tau, actuated):
    return model_symbols(source, q, dq, tau, actuated)[:4]


def _own_symbols(source, q, dq, tau, actuated, S):
    """Systems that carry their own symbols (their expressions are written in them)."""
    given = [k for k, v in (("q", q), ("dq", dq), ("tau", tau), ("actuated", actuated)) if v is not None]
    if given:
        raise ValueError(f"derive: {_describe(source)} carries its own symbols; {', '.join(given)} cannot be "
                         "given (build it with the symbols you want)")
    col = lambda v: sp.Matrix(list(v)) if len(v) else sp.zeros(0, 1)  # noqa: E731
    return col(source.q), col(source.dq), col(source.tau), S


@_symbols.register
def _(source: Mechanism, q, dq, tau, actuated):
    return _own_symbols(source, q, dq, tau, actuated, source.S)


@_symbols.register
def _(source: TMTSystem, q, dq, tau, actuated):
    return _own_symbols(source, q, dq, tau, actuated, source.S)


@_symbols.register
def _(source: PneSystem, q, dq, tau, actuated):
    return _own_symbols(source, q, dq, tau, actuated, None)  # compute_pne finds S from the force elements


@_symbols.register
def _(source: list, q, dq, tau, actuated):
    if q is None or dq is None:
        raise ValueError("derive: a proNEu body list needs its coordinate symbols: give q= and dq=")
    if actuated is not None:
        raise ValueError("derive: for a proNEu body list the actuators are the τ in its force elements; "
                         "give tau= instead of actuated=")
    tau = sp.zeros(0, 1) if tau is None else symbol_column(tau, "tau")
    return symbol_column(q, "q"), symbol_column(dq, "dq"), tau, None


def derive(source, method: str = "rnea", *, q=None, dq=None, tau=None, actuated=None,
           raw: bool = False, simplify: bool | float = False, progress: Callable[[str], None] | None = None,
           verbose: bool = False, **options) -> EquationsOfMotion:
    """Symbolic equations of motion ``M(q) q̈ + b(q, q̇) + g(q) = Sᵀ τ`` of ``source``.

    Every method gives the same equations (the tests compare them entry by entry); "rnea" is
    the fastest. Revolute, prismatic, helical and fixed joints are derived; a floating base is
    written with Euler angles (three prismatic and three revolute joints through massless
    bodies, as ``multibody.models.starleth`` does).

    Parameters
    ----------
    source : Model, Mechanism, TMTSystem, PneSystem or list of Body
        A ``multibody.Model`` (numeric, or ``symbolic=True`` with SymPy parameters), a
        ``multibody.model.mechanism.Mechanism`` (tree plus constraints and force elements), a
        ``TMTSystem``, a ``PneSystem`` or a list of proNEu ``Body`` (see the module docstring).
    method : str, optional
        ``"rnea"`` (default), ``"pne"``, ``"tmt"``, ``"lagrange"`` or a name registered with
        :func:`register_method` (case-insensitive).
    q, dq, tau : sequence of sympy.Symbol, optional
        Symbols of the coordinates (rad or m), rates and actuator forces for a model (default:
        the seed's names for built-in models, else ``q0…``, ``dq0…``, ``tau0…``); required
        ``q`` and ``dq`` for a body list. Systems carry their own and refuse them.
    actuated : sequence of int, optional
        Dof indices of a model that carry an actuator (default: the seed's, else all); S is the
        m×n selection matrix of these dofs.
    raw : bool, optional
        False (default): M, b, g in the readable form of :meth:`EquationsOfMotion.readable`
        (``sin² + cos²`` and angle sums collapsed: the double pendulum's M[0,0] reads
        ``… + l1*l2*m2*cos(th2)``); True: as the method derived them.
    simplify : bool or float, optional
        False (default), True (a 60 s limit) or a positive time limit in seconds for
        :meth:`EquationsOfMotion.simplify`.
    progress : callable, optional
        ``progress(message)``, called with one line at each stage.
    verbose : bool, optional
        Print the stage messages with elapsed times (when ``progress`` is None).
    **options
        Passed on to the method: ``frame="body"|"inertial"|"auto"`` for "rnea" and "pne";
        ``kinematics=`` for "pne"; ``force_elements=``, ``gravity=`` (m/s², inertial frame)
        with a body list; the elements of :class:`TMTSystem` (``springs=``, ``forces=``, …)
        for "tmt" on a model.

    Returns
    -------
    EquationsOfMotion
        ``M`` (n×n), ``b``, ``g`` (n×1), ``S`` (m×n), ``q``, ``dq``, ``tau``, ``params`` (the
        model's parameter symbols), ``extra["method"]``; ``to_numeric(values)`` evaluates them.

    Raises
    ------
    TypeError
        ``source`` is nothing a method derives from, or not what ``method`` accepts (the message
        lists what does); ``q``, ``dq`` or ``tau`` are not sequences of symbols; ``progress`` is
        not callable; an option the method does not take.
    ValueError
        An unknown ``method``; ``q``/``dq``/``tau``/``actuated`` of the wrong length, repeated
        or out of range; symbols given for a system that carries its own; a joint the methods
        cannot derive (quaternion or planar), naming the body; a bad ``simplify``.

    Examples
    --------
    >>> import multibody as mb
    >>> eom = mb.symbolic.derive(mb.models.double_pendulum(symbolic=True))
    >>> eom.M.shape, list(eom.q), list(eom.tau)
    ((2, 2), [th1, th2], [T1, T2])
    >>> eom.M[0, 1]                     # the second link: a box of length l2, width w2, height h2
    l1*l2*m2*cos(th2)/2 + m2*(h2**2 + 3*l2**2 + w2**2)/12
    """
    key = str(method).lower()
    entry = DERIVATION_METHODS.get(key)
    if entry is None:
        raise ValueError(f"derive: unknown method {method!r}; choose one of {', '.join(sorted(DERIVATION_METHODS))}")
    if not any(isinstance(source, e.accepts) for e in DERIVATION_METHODS.values()):
        _symbols(source, q, dq, tau, actuated)  # raises: nothing derives from it
    if not isinstance(source, entry.accepts):
        hint = ""
        if isinstance(source, Mechanism):
            hint = (f"; its constraints and force elements need method 'tmt' or 'lagrange' — derive(mechanism.model, "
                    f"{key!r}) derives the tree alone")
        accepted = ", ".join("a list of proNEu Body" if t is list else t.__name__ for t in entry.accepts)
        raise TypeError(f"derive: method {key!r} derives from {accepted}; got {_describe(source)}{hint}. "
                        f"derive accepts {_accepted()}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable progress(message) or None, got {type(progress).__name__}")
    if not isinstance(simplify, bool) and not (isinstance(simplify, numbers.Real) and 0 < simplify < float("inf")):
        raise ValueError(f"simplify: expected False, True or a positive time limit in seconds, got {simplify!r}")
    say = progress
    if say is None and verbose:
        t_start = time.perf_counter()

        def say(msg):
            print(f"[derive {key} {time.perf_counter() - t_start:7.2f} s] {msg}", flush=True)

    with one_derivation(source):     # the model's joint checks and parameters: once, not per stage
        qs, dqs, taus, S = _symbols(source, q, dq, tau, actuated)
        if entry.readable and not raw:
            options = {**options, "readable": True}
        eom = entry.function(source, qs, dqs, taus, S=S, progress=say, **options)
    if not isinstance(eom, EquationsOfMotion):
        raise TypeError(f"derive(method={method!r}) returned {type(eom).__name__}, not an EquationsOfMotion")
    eom.extra.setdefault("method", key)
    if not raw and eom.extra.get("form") != "readable":
        eom = eom.readable()
    if simplify:
        eom = eom.simplify(time_limit=60.0 if simplify is True else float(simplify), progress=say)
    return eom
