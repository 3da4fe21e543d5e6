"""One specification of generated code: named input arrays, named output arrays, CSE.

Every backend (NumPy source, C source, compiled module) is emitted from a :class:`CodeSpec`:

* ``inputs``  — ordered groups ``(name, [symbols])``, e.g. ``q``, ``dq``, ``tau``, ``param``;
  each group becomes one flat array argument (``q[0]``, ``q[1]``, …);
* ``outputs`` — ordered ``(name, shape, [expressions])``, row-major, e.g. ``M`` (n×n), ``b``;
* ``defaults`` — default values of the input groups (the model's parameter values: proNEu's
  ``paramDef``), used by the example ``main.c`` and as the default ``params`` of compiled code;
* after :meth:`CodeSpec.cse`: ``temporaries`` ``[(symbol, expression)]`` and the reduced outputs.

Common-subexpression elimination is SymEngine's ``cse`` (SymPy's as a fallback): the peers'
lesson (the Whipple bicycle's mass matrix, 1.17 million operations, 2 367 after CSE) is that
generated code must never be printed without it.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

import numpy as np
import symengine as se
import sympy as sp

__all__ = ["CodeSpec", "make_spec", "eom_spec", "count_ops", "C_KEYWORDS", "TEMP_PREFIX"]

#: C89/C99/C11 keywords and names the generated C code itself uses (cannot name an array).
C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local
main printf fabs sqrt sin cos tan exp log pow atan2 asin acos atan sinh cosh tanh NULL size_t
np numpy batch
""".split())

#: temporaries are named ``cg_t0, cg_t1, …``; no array may use this prefix
TEMP_PREFIX = "cg_t"

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_identifier(name, what):
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(f"{what} {name!r} is not a valid C/Python identifier (letters, digits, "
                         "underscores; not starting with a digit)")
    if name in C_KEYWORDS or keyword.iskeyword(name) or name.startswith("cg_") or name.startswith("_"):
        raise ValueError(f"{what} {name!r} is reserved (a C or Python keyword, a name the generated code "
                         f"uses, or starts with '_' or 'cg_'); choose another name")


def _to_se(x):
    if isinstance(x, se.Basic):
        return x
    return se.sympify(x)


def count_ops(exprs) -> int:
    """Arithmetic operations in SymEngine/SymPy expressions, counted on the expression tree.

    ``a + b + c`` counts 2, ``a*b*c`` 2, ``x**3`` 2 (two products), ``x**-1`` 1, a function call 1,
    a negation 1. Shared subtrees are counted every time they occur (as printed code would do
    without CSE), so counting the temporaries and the reduced expressions after CSE gives the
    cost of the generated code.

    Parameters
    ----------
    exprs : expression, or iterable of expressions
        One SymPy/SymEngine expression (or number), or a list, tuple or matrix of them.

    Returns
    -------
    int
        The number of operations, summed over the expressions.

    Raises
    ------
    TypeError
        ``exprs`` is a string or not an expression or iterable of them.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody import codegen
    >>> x, y = sp.symbols("x y")
    >>> codegen.count_ops([x + y, x * y * x, sp.sin(x) ** 3])
    6
    >>> codegen.count_ops(sp.Matrix([[x, -y], [y, x**2]]))
    2
    """
    memo = {}

    def ops(e):
        key = e
        if key in memo:
            return memo[key]
        args = e.args
        if not args:
            memo[key] = 0
            return 0
        t = type(e).__name__
        inner = sum(ops(a) for a in args)
        if t in ("Add", "Mul"):          # k terms or factors: k − 1 operations (−x counts one)
            n = len(args) - 1
        elif t == "Pow":
            ex = args[1]
            if isinstance(ex, se.Integer):  # x**k: k − 1 products, one division if k < 0
                k = abs(int(ex))
                n = max(k - 1, 0) + (1 if int(ex) < 0 else 0)
            else:
                n = 1
        else:
            n = 1
        memo[key] = inner + n
        return memo[key]

    if isinstance(exprs, (str, bytes)):
        raise TypeError("exprs: expected SymPy/SymEngine expressions (one, or a list or matrix of them), "
                        "got a string")
    if isinstance(exprs, (se.Basic, sp.Basic, int, float)) and not isinstance(exprs, (sp.MatrixBase, se.MatrixBase)):
        exprs = [exprs]
    try:
        exprs = list(exprs)
    except TypeError:
        raise TypeError(f"exprs: expected SymPy/SymEngine expressions, got {type(exprs).__name__}") from None
    total = 0
    for e in exprs:
        total += ops(_to_se(e))
    return total


@dataclass
class CodeSpec:
    """Inputs, outputs and defaults of one generated function (see the module docstring)."""

    name: str
    inputs: list            # [(name, [se.Symbol])]
    outputs: list           # [(name, (rows, cols), [se.Basic])]
    defaults: dict = field(default_factory=dict)   # input name -> np.ndarray
    info: dict = field(default_factory=dict)
    temporaries: list | None = None                 # [(se.Symbol, se.Basic)] after cse()
    reduced: list | None = None                     # [(name, shape, [se.Basic])] after cse()
    tape: list | None = None                        # [(se.Symbol, se.Basic)] intermediate definitions

    # ---- helpers -------------------------------------------------------------------------
    def input_names(self):
        return [nm for nm, _ in self.inputs]

    def output_names(self):
        return [nm for nm, _, _ in self.outputs]

    def input_size(self, name):
        return len(dict(self.inputs)[name])

    def is_vector(self, name) -> bool:
        """True if output ``name`` is returned as a vector (one column, not declared a matrix)."""
        shp = self.output_shape(name)
        return shp[1] == 1 and name not in self.info.get("matrices", ())

    def output_shape(self, name):
        return {nm: shp for nm, shp, _ in self.outputs}[name]

    def cse(self) -> "CodeSpec":
        """Run common-subexpression elimination over all outputs at once (idempotent).

        With a ``tape`` (intermediate definitions recorded while tracing an algorithm) the
        definitions' right-hand sides go through the same elimination and everything is put in
        dependency order.
        """
        if self.temporaries is not None:
            return self
        tape = self.tape or []
        flat = [e for _, e in tape] + [e for _, _, ex in self.outputs for e in ex]
        nonzero = [k for k, e in enumerate(flat) if e != 0]
        repl, red = se.cse([flat[k] for k in nonzero]) if nonzero else ([], [])
        full = [se.Integer(0)] * len(flat)
        for k, r in zip(nonzero, red):
            full[k] = r
        defs = list(repl) + [(sym, full[k]) for k, (sym, _) in enumerate(tape)]
        if tape:
            defs = _dependency_order(defs, first=len(repl))
        # temporaries keep their symbols; printers name them cg_t0, cg_t1, … in this order
        # (one xreplace per expression with a growing map would cost O(n²) conversions)
        temps = defs
        red = full[len(tape):]
        out, pos = [], 0
        for nm, shp, ex in self.outputs:
            out.append((nm, shp, red[pos:pos + len(ex)]))
            pos += len(ex)
        self.temporaries, self.reduced = temps, out
        return self

    def temp_names(self) -> dict:
        """{temporary symbol: its name in generated code} (``cg_t0``, ``cg_t1``, …)."""
        self.cse()
        return {t: f"{TEMP_PREFIX}{k}" for k, (t, _) in enumerate(self.temporaries)}

    def count_ops(self, cse: bool = True) -> int:
        """Operations of the code (after CSE: temporaries plus reduced outputs)."""
        if not cse:
            return count_ops(e for _, _, ex in self.outputs for e in ex)
        self.cse()
        return count_ops([e for _, e in self.temporaries] + [e for _, _, ex in self.reduced for e in ex])

    def renamed(self, arrays: dict | None, name: str | None = None) -> "CodeSpec":
        """Copy with inputs/outputs renamed by ``arrays`` ({default name: new name}) and the
        function called ``name``; validated."""
        if not arrays and (name is None or name == self.name):
            return self
        arrays = dict(arrays or {})
        known = set(self.input_names()) | set(self.output_names())
        unknown = set(arrays) - known
        if unknown:
            raise ValueError(f"arrays: no input or output named {', '.join(sorted(map(str, unknown)))}; "
                             f"known names are {', '.join(self.input_names() + self.output_names())}")
        ren = lambda nm: arrays.get(nm, nm)  # noqa: E731
        info = dict(self.info)
        for key in ("matrices", "zero_default"):
            if key in info:
                info[key] = [ren(nm) for nm in info[key]]
        new = CodeSpec(name or self.name, [(ren(n), s) for n, s in self.inputs],
                       [(ren(n), shp, ex) for n, shp, ex in self.outputs],
                       {ren(k): v for k, v in self.defaults.items()}, info,
                       self.temporaries,
                       None if self.reduced is None else [(ren(n), shp, ex) for n, shp, ex in self.reduced],
                       self.tape)
        new.validate()
        return new

    def validate(self) -> "CodeSpec":
        """Check names (identifiers, no clashes) and that outputs use only declared inputs."""
        _check_identifier(self.name, "function name")
        seen = {}
        for kind, names in (("input", self.input_names()), ("output", self.output_names())):
            for nm in names:
                _check_identifier(nm, f"{kind} array name")
                if nm in seen:
                    raise ValueError(f"array name {nm!r} is used twice ({seen[nm]} and {kind}); "
                                     "every input and output array needs its own name")
                if nm == self.name or nm.startswith(self.name + "_"):
                    raise ValueError(f"array name {nm!r} clashes with the function name {self.name!r}")
                seen[nm] = kind
        declared = {}
        for nm, syms in self.inputs:
            for s in syms:
                if not isinstance(s, se.Symbol):
                    raise TypeError(f"input {nm!r}: entries must be symbols, got {s!r}")
                if s in declared:
                    raise ValueError(f"symbol {s} is declared twice (in {declared[s]!r} and {nm!r})")
                declared[s] = nm
        free = set()
        for nm, shp, ex in self.outputs:
            if len(ex) != shp[0] * shp[1]:
                raise ValueError(f"output {nm!r}: {len(ex)} entries for shape {shp}")
            for e in ex:
                free |= set(e.free_symbols)
        missing = free - set(declared) - {sym for sym, _ in (self.tape or [])}
        if missing:
            raise ValueError("expressions contain symbols that are not inputs: "
                             + ", ".join(sorted(str(s) for s in missing))
                             + "; declare them as inputs (e.g. parameters) or substitute values")
        for nm, v in self.defaults.items():
            if nm not in dict(self.inputs):
                raise ValueError(f"defaults: no input named {nm!r}")
            if np.shape(v) != (self.input_size(nm),):
                raise ValueError(f"defaults[{nm!r}]: expected {self.input_size(nm)} values, got shape {np.shape(v)}")
        return self


def _dependency_order(defs, first: int = 0):
    """Definitions [(symbol, expression)] ordered so each comes after those it uses.

    Definitions from ``first`` on (the tape, in trace order) drive the order; each pulls in the
    earlier definitions it needs depth-first, which keeps a value close to its first use.
    """
    index = {sym: k for k, (sym, _) in enumerate(defs)}
    deps = [[index[s] for s in e.free_symbols if s in index] for _, e in defs]
    done = [False] * len(defs)
    order = []
    for root in list(range(first, len(defs))) + list(range(first)):
        if done[root]:
            continue
        stack = [(root, 0)]
        while stack:
            k, pos = stack.pop()
            if done[k]:
                continue
            while pos < len(deps[k]) and done[deps[k][pos]]:
                pos += 1
            if pos < len(deps[k]):
                stack.append((k, pos + 1))
                stack.append((deps[k][pos], 0))
            else:
                done[k] = True
                order.append(defs[k])
    return order


def _flat_matrix(m):
    if isinstance(m, sp.MatrixBase) or isinstance(m, se.DenseMatrix):
        return (m.rows, m.cols), [_to_se(e) for e in (list(m) if isinstance(m, sp.MatrixBase) else m.ravel())]
    a = np.asarray(m, dtype=object)
    if a.ndim == 0:
        return (1, 1), [_to_se(a.item())]
    if a.ndim == 1:
        return (a.shape[0], 1), [_to_se(e) for e in a]
    if a.ndim == 2:
        return a.shape, [_to_se(e) for e in a.ravel()]
    raise ValueError(f"outputs must be scalars, vectors or matrices; got an array of shape {a.shape}")


def make_spec(outputs: dict, inputs: dict, *, name: str = "eom", defaults: dict | None = None,
              info: dict | None = None) -> CodeSpec:
    """A :class:`CodeSpec` from SymPy/SymEngine matrices with declared inputs.

    Use it to generate code for any expressions, not only equations of motion: every backend
    (:func:`to_numpy`, :func:`to_c`, :func:`compile`, :func:`to_matlab`, :func:`to_mex`) takes
    the spec.

    Parameters
    ----------
    outputs : dict
        {array name: matrix, vector or scalar of expressions}, non-empty; matrices are stored
        row-major.
    inputs : dict
        {array name: list of symbols}, in argument order; every symbol the outputs use must be
        declared in exactly one input.
    name : str, optional
        Name of the generated function (an identifier; default ``"eom"``).
    defaults : dict, optional
        Default values of inputs: {input name: values} or {symbol or symbol name: number}
        (an input gets a default when all its symbols have one).
    info : dict, optional
        Free-form metadata carried to the generated code (e.g. ``{"model": "my model"}``).

    Returns
    -------
    CodeSpec
        The validated specification.

    Raises
    ------
    TypeError
        ``outputs`` is not a non-empty dict, ``inputs`` not a dict, or an input entry is not a
        symbol.
    ValueError
        A name that is not an identifier, reserved or used twice; a symbol declared twice; an
        output that uses undeclared symbols or is not at most 2-D; a ``defaults`` key that is no
        input or input symbol, or values of the wrong size or not numbers.

    Examples
    --------
    >>> import sympy as sp
    >>> x, k = sp.symbols("x k")
    >>> spec = make_spec({"y": sp.Matrix([k * sp.sin(x), 0])}, {"x": [x], "k": [k]})
    >>> spec.output_shape("y"), spec.input_names()
    ((2, 1), ['x', 'k'])
    """
    if not isinstance(outputs, dict) or not outputs:
        raise TypeError("outputs: expected a non-empty dict {array name: matrix of expressions}")
    if not isinstance(inputs, dict):
        raise TypeError("inputs: expected a dict {array name: list of symbols}")
    ins = []
    for nm, syms in inputs.items():
        syms = list(syms) if not isinstance(syms, (sp.MatrixBase,)) else list(syms)
        conv = []
        for s in syms:
            t = _to_se(s)
            if not isinstance(t, se.Symbol):
                raise TypeError(f"input {nm!r}: {s!r} is not a symbol")
            conv.append(t)
        ins.append((nm, conv))
    outs = []
    for nm, m in outputs.items():
        shp, ex = _flat_matrix(m)
        outs.append((nm, tuple(int(d) for d in shp), ex))
    spec = CodeSpec(name, ins, outs, {}, dict(info or {}))
    spec.defaults = _resolve_defaults(spec, defaults or {})
    return spec.validate()


def _resolve_defaults(spec: CodeSpec, values: dict) -> dict:
    """{input name: array} from {input name: array} or {symbol/name: number} (mixed allowed)."""
    out = {}
    groups = dict(spec.inputs)
    by_sym = {}
    known = {str(s) for _, syms in spec.inputs for s in syms}
    for k, v in values.items():
        if isinstance(k, str) and k in groups:
            try:
                out[k] = np.asarray(v, dtype=float).ravel()
            except (TypeError, ValueError) as exc:
                raise ValueError(f"defaults[{k!r}]: expected numbers ({exc})") from None
        elif str(k) in known:
            by_sym[str(k)] = v
        else:
            raise ValueError(f"defaults: no input and no input symbol named {str(k)!r}; "
                             f"inputs are {', '.join(groups)}")
    if by_sym:
        for nm, syms in spec.inputs:
            if all(str(s) in by_sym for s in syms) and syms:
                try:
                    out[nm] = np.array([float(by_sym[str(s)]) for s in syms])
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"defaults for {nm!r} must be numbers ({exc})") from None
    return out


def eom_spec(eom, *, name: str = "eom", values: dict | None = None, outputs=("M", "b", "g", "f")) -> CodeSpec:
    """The :class:`CodeSpec` of an :class:`~multibody.symbolic.EquationsOfMotion`.

    Inputs ``q`` (n), ``dq`` (n), ``tau`` (m), ``param`` (the parameters the expressions use, in
    the order of ``eom.params``); outputs ``M`` (n×n), ``b``, ``g`` and ``f = Sᵀτ`` (n), for
    M q̈ + b + g = f.

    Parameters
    ----------
    eom : EquationsOfMotion
        Equations from ``multibody.symbolic.derive`` (or any method).
    name : str, optional
        Name of the generated function (an identifier; default ``"eom"``).
    values : dict, optional
        The parameters' default values, {symbol or name: number}; defaults also come from
        ``eom.extra['param_values']`` when a derivation left them there. When given, every
        parameter the expressions use needs a value.
    outputs : sequence of str, optional
        Which of ``"M"``, ``"b"``, ``"g"``, ``"f"`` to generate (default all four).

    Returns
    -------
    CodeSpec
        The validated specification.

    Raises
    ------
    TypeError
        ``eom`` is not an ``EquationsOfMotion``.
    ValueError
        ``outputs`` names something other than M, b, g, f; the expressions use symbols that are
        neither coordinates nor ``eom.params``; ``values`` lacks a parameter.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody import codegen
    >>> model = mb.models.ra3link(symbolic=True)
    >>> eom = mb.symbolic.derive(model)
    >>> spec = codegen.eom_spec(eom, outputs=("M", "g"), values=mb.models.parameters(model))
    >>> spec.input_names(), spec.output_names(), spec.output_shape("M")
    (['q', 'dq', 'tau', 'param'], ['M', 'g'], (3, 3))
    >>> len(spec.defaults["param"]) == len(spec.info["param_names"])    # the seed's values
    True
    """
    from ..symbolic.eom import EquationsOfMotion

    if not isinstance(eom, EquationsOfMotion):
        raise TypeError(f"eom: expected multibody.symbolic.EquationsOfMotion, got {type(eom).__name__}")
    if isinstance(outputs, str) or not outputs:
        raise ValueError(f"outputs: expected a non-empty sequence of names among M, b, g, f, got {outputs!r}")
    unknown = [k for k in outputs if k not in ("M", "b", "g", "f")]
    if unknown:
        raise ValueError(f"outputs: unknown output(s) {', '.join(map(repr, unknown))}; choose among M, b, g, f")
    n = eom.n
    cache = getattr(eom, "_se_exprs", None)
    mats = {}
    for key in outputs:
        if key == "f":
            shp, ex = _flat_matrix(eom.f)
        elif cache is not None and key in cache and len(cache[key]) == (n * n if key == "M" else n):
            ex = [_to_se(e) for e in cache[key]]
            shp = (n, n) if key == "M" else (n, 1)
        else:
            shp, ex = _flat_matrix(getattr(eom, key))
        mats[key] = (shp, ex)
    used = set()
    for shp, ex in mats.values():
        for e in ex:
            used |= set(e.free_symbols)
    coords = {_to_se(s) for s in list(eom.q) + list(eom.dq) + list(eom.tau)}
    params = [_to_se(p) for p in eom.params]
    extra = sorted((s for s in used - coords - set(params)), key=str)
    if extra:
        raise ValueError("expressions contain symbols that are not inputs: " + ", ".join(map(str, extra))
                         + " (not among q, dq, tau or eom.params); substitute values with eom.subs({...})")
    param = [p for p in params if p in used]
    spec = CodeSpec(name, [("q", [_to_se(s) for s in eom.q]), ("dq", [_to_se(s) for s in eom.dq]),
                           ("tau", [_to_se(s) for s in eom.tau]), ("param", param)],
                    [(k, shp, ex) for k, (shp, ex) in mats.items()], {},
                    {"n": n, "param_names": [str(p) for p in param], "matrices": ["M"]})
    vals = dict(eom.extra.get("param_values", {}) or {})
    vals.update(values or {})
    vals = {str(k): v for k, v in vals.items()}
    if param:
        missing = [str(p) for p in param if str(p) not in vals]
        if not missing:
            spec.defaults["param"] = np.array([float(vals[str(p)]) for p in param])
        elif values is not None:
            raise ValueError("values: no default value for parameter(s) " + ", ".join(missing))
    else:
        spec.defaults["param"] = np.zeros(0)
    return spec.validate()
