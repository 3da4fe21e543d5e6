"""``rhs_spec``: the forward dynamics q̈ = M⁻¹(f − b − g) as one straight-line program.

The right-hand side an ODE solver calls (PyDy's ``generate_ode_function``) needs M and the
forcing and then a linear solve. Calling into NumPy for the solve costs more than the whole
evaluation for small n, and a general solver branches and loops. Here M's lower triangle and the
forcing become named definitions (a tape, as the traced algorithms have), then the square-root
free Cholesky factorisation M = L D Lᵀ (Golub and Van Loan, *Matrix Computations*, 4th ed.,
Algorithm 4.1.2; M is symmetric positive definite), the forward substitution L y = r, the scaling
z = D⁻¹ y and the back substitution Lᵀ q̈ = z, all unrolled for the fixed n: n divisions, no
square root, no branch. Structural zeros of M stay exact zeros, so a branched tree's M does
less work. The whole program goes through one common-subexpression elimination with M and the
forcing, and compiles (:func:`multibody.codegen.compile`) into a module with a batch entry.
"""
from __future__ import annotations

import symengine as se

from .spec import CodeSpec

__all__ = ["rhs_spec"]


class _Tape:
    """Definitions ``(symbol, expression)`` in order; numbers and symbols are not bound."""

    def __init__(self):
        self.defs = []

    def bind(self, x):
        if isinstance(x, (se.Number, se.Symbol)) or x == 0:
            return x
        sym = se.Dummy(f"rhs{len(self.defs)}")   # a Dummy: no clash with the model's own symbols
        self.defs.append((sym, x))
        return sym


def _ldlt_solve(M, r, bind):
    """x = M⁻¹ r by M = L D Lᵀ (Golub and Van Loan, Algorithm 4.1.2), every entry bound.

    ``M`` is a list of rows of symbols/numbers (only the lower triangle is read), ``r`` a list.
    Returns the list x.
    """
    n = len(r)
    L = [[0] * n for _ in range(n)]
    inv_d = [0] * n
    t = [[0] * n for _ in range(n)]      # t[j][k] = L[j][k] d[k], used by every row below j
    for j in range(n):
        d = M[j][j] - sum((L[j][k] * t[j][k] for k in range(j)), se.Integer(0))
        inv_d[j] = bind(1 / bind(d))
        for i in range(j + 1, n):
            t[i][j] = bind(M[i][j] - sum((L[i][k] * t[j][k] for k in range(j)), se.Integer(0)))
            L[i][j] = bind(t[i][j] * inv_d[j])     # t[i][j] = L[i][j] d[j] before the division
    y = [0] * n
    for i in range(n):                    # L y = r
        y[i] = bind(r[i] - sum((L[i][k] * y[k] for k in range(i)), se.Integer(0)))
    x = [0] * n
    for i in range(n - 1, -1, -1):        # Lᵀ x = D⁻¹ y
        x[i] = bind(y[i] * inv_d[i] - sum((L[k][i] * x[k] for k in range(i + 1, n)), se.Integer(0)))
    return x


def rhs_spec(source, *, values: dict | None = None, name: str = "rhs", method: str | None = None) -> CodeSpec:
    """The :class:`CodeSpec` of q̈ = M⁻¹(f − b − g): M, the forcing and an unrolled LDLᵀ solve.

    Compile it with :func:`multibody.codegen.compile` for an ODE right-hand side with no call into
    NumPy (one state per call, or a batch in one C loop); :func:`to_numpy` and :func:`to_c` take it
    too.

    Parameters
    ----------
    source : Model, EquationsOfMotion, Mechanism, TMTSystem or PneSystem
        What :func:`as_spec` accepts, except a ``CodeSpec`` (its outputs need not be M, b, g, f).
    values : dict, optional
        Default parameter values, {symbol or name: number}, as :func:`as_spec`'s.
    name : str, optional
        Name of the generated function (an identifier; default ``"rhs"``).
    method : str, optional
        Derivation method for a model or system, as :func:`as_spec`'s.

    Returns
    -------
    CodeSpec
        Inputs q (n), dq (n), tau (m), param; output qdd (n): the accelerations
        M⁻¹(Sᵀτ − b − g).

    Raises
    ------
    TypeError
        ``source`` is a ``CodeSpec`` or none of the kinds :func:`as_spec` accepts.
    ValueError
        ``name`` or ``method`` is not valid (as :func:`as_spec`).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> from multibody import codegen
    >>> model = mb.models.double_pendulum()
    >>> f = codegen.to_numpy(codegen.rhs_spec(model))
    >>> q, dq = np.array([0.3, -0.2]), np.array([0.1, 0.5])
    >>> bool(np.allclose(f(q, dq)["qdd"], mb.aba(model, q, dq, np.zeros(2)), rtol=1e-12, atol=1e-12))
    True
    """
    from .api import as_spec

    if isinstance(source, CodeSpec):
        raise TypeError("source: rhs_spec derives M, b, g and f itself; pass the model or EquationsOfMotion, "
                        "not a CodeSpec")
    base = as_spec(source, values=values, name=name, method=method)
    outs = {nm: ex for nm, _, ex in base.outputs}
    n = base.output_shape("M")[0]
    tape = _Tape()
    M = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            M[i][j] = tape.bind(outs["M"][i * n + j])
    r = [tape.bind(outs["f"][i] - outs["b"][i] - outs["g"][i]) for i in range(n)]
    qdd = _ldlt_solve(M, r, tape.bind)
    info = {k: v for k, v in base.info.items() if k != "matrices"}
    info["algorithm"] = "M⁻¹(f − b − g) by LDLᵀ"
    spec = CodeSpec(name, base.inputs, [("qdd", (n, 1), qdd)], dict(base.defaults), info)
    spec.tape = tape.defs
    return spec.validate()
