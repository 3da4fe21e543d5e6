"""Derivatives of the equations of motion: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ and ∂(M q̈ + b + g)/∂(q, q̇).

Inverse dynamics ID(q, q̇, q̈) = M(q) q̈ + b(q, q̇) + g(q) is differentiated symbolically (SymEngine),
with q̈ as an extra input, by the chain rule through the common-subexpression-eliminated program; forward dynamics q̈ = M⁻¹(Sᵀτ − b − g) then follows without a symbolic
inverse (Carpentier & Mansard's identity, differentiating M q̈ + b + g = f at the solution):

    ∂q̈/∂q = M⁻¹ (∂f/∂q − ∂ID/∂q |_{q̈ = FD}),   ∂q̈/∂q̇ = −M⁻¹ ∂b/∂q̇,   ∂q̈/∂τ = M⁻¹ Sᵀ

(A = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]] and B = [[0], [∂q̈/∂τ]] linearise ẋ = (q̇, q̈).) The derivative
expressions go through the same CSE and backends as M, b, g.
"""
from __future__ import annotations

import numpy as np
import symengine as se

from .spec import CodeSpec

__all__ = ["derivatives", "Derivatives", "derivative_spec"]


class _Chain:
    """Forward-mode chain rule over a straight-line program (the CSE'd equations of motion).

    For every temporary t = e(inputs, earlier temporaries) and every variable x it depends on,
    dt/dx = Σ_s ∂e/∂s · ds/dx over the symbols s of e — one small symbolic derivative per
    temporary instead of differentiating the expanded equations (StarlETH: seconds, not minutes).
    Each derivative is recorded as a definition ``d_k`` (structural zeros are never created).
    """

    def __init__(self, variables):
        self.var_index = {x: j for j, x in enumerate(variables)}
        self.deriv = {}                  # symbol -> {variable index: derivative symbol or number}
        self.defs = []

    def _partials(self, e):
        out = {}
        for s in e.free_symbols:
            if s in self.var_index:
                out.setdefault(self.var_index[s], []).append((se.diff(e, s), 1))
            for j, ds in self.deriv.get(s, {}).items():
                out.setdefault(j, []).append((se.diff(e, s), ds))
        return {j: sum((p * d for p, d in terms), se.Integer(0)) for j, terms in out.items()}

    def define(self, sym, e):
        """Record t = e: derivatives of t become definitions."""
        self.defs.append((sym, e))
        d = {}
        for j, expr in self._partials(e).items():
            if expr == 0:
                continue
            if isinstance(expr, (se.Number, se.Symbol)):
                d[j] = expr
            else:
                ds = se.Symbol(f"d_{len(self.defs)}")
                self.defs.append((ds, expr))
                d[j] = ds
        if d:
            self.deriv[sym] = d

    def gradient(self, e, n_vars):
        """[de/dx_j for j] as expressions of the recorded symbols."""
        p = self._partials(e)
        return [p.get(j, se.Integer(0)) for j in range(n_vars)]


def derivative_spec(base: CodeSpec, name: str | None = None) -> CodeSpec:
    """Spec with inputs q, dq, ddq, tau, param and outputs M, h = b + g, f, Sᵀ, ∂ID/∂q, ∂ID/∂q̇, ∂f/∂q.

    ID = M q̈ + b + g; the derivatives come from the chain rule over the CSE'd program of M, b,
    g, f (:class:`_Chain`), so they cost about as much to generate as the equations themselves.
    """
    ins = dict(base.inputs)
    outs = {nm: ex for nm, _, ex in base.outputs}
    for need in ("M", "b", "g", "f"):
        if need not in outs:
            raise ValueError(f"derivatives: the spec has no output {need!r} (needs M, b, g, f)")
    q, dq, tau = ins["q"], ins["dq"], ins["tau"]
    n, m = len(q), len(tau)
    taken = {str(s) for ss in ins.values() for s in ss}
    ddq = []
    for k in range(n):
        nm = f"ddq{k}"
        while nm in taken:
            nm = "_" + nm
        ddq.append(se.Symbol(nm))
    base.cse()
    reduced = {nm: ex for nm, _, ex in base.reduced}
    chain = _Chain(list(q) + list(dq) + list(tau))
    for t, e in base.temporaries:
        chain.define(t, e)
    M, b, g, f = reduced["M"], reduced["b"], reduced["g"], reduced["f"]
    h = [b[i] + g[i] for i in range(n)]
    dID_dq, dID_ddq, df_dq, St = [], [], [], []
    for i in range(n):
        ID_i = sum((M[i * n + j] * ddq[j] for j in range(n)), se.Integer(0)) + h[i]
        grad = chain.gradient(ID_i, 2 * n + m)
        dID_dq += grad[:n]
        dID_ddq += chain.gradient(b[i], 2 * n + m)[n:2 * n]
        gf = chain.gradient(f[i], 2 * n + m)
        df_dq += gf[:n]
        St += gf[2 * n:]
    spec = CodeSpec(name or f"{base.name}_derivatives",
                    [("q", q), ("dq", dq), ("ddq", ddq), ("tau", tau), ("param", ins.get("param", []))],
                    [("M", (n, n), list(M)), ("h", (n, 1), h), ("f", (n, 1), list(f)), ("St", (n, m), St),
                     ("dID_dq", (n, n), dID_dq), ("dID_ddq", (n, n), dID_ddq), ("df_dq", (n, n), df_dq)],
                    dict(base.defaults), dict(base.info))
    spec.tape = chain.defs
    spec.info["zero_default"] = ["tau", "ddq"]
    spec.info["matrices"] = ["M", "St", "dID_dq", "dID_ddq", "df_dq"]
    if m == 0:
        spec.outputs = [o for o in spec.outputs if o[0] != "St"]
    return spec.validate()


class Derivatives:
    """Callable: ``d(q, qd, tau=None, params=None)`` → dict with ``qdd``, ``dqdd_dq``, ``dqdd_dqd``,
    ``dqdd_dtau``; ``d.inverse(q, qd, qdd, params=None)`` → ``tau_id`` (= M q̈ + b + g), ``dID_dq``,
    ``dID_dqd``. Inputs may carry a batch dimension. ``backend`` is the generated function."""

    def __init__(self, spec: CodeSpec, backend):
        self.spec = spec
        self.backend = backend
        self.n = len(dict(spec.inputs)["q"])
        self.m = len(dict(spec.inputs)["tau"])

    def inverse(self, q, qd, qdd, params=None) -> dict:
        """∂(M q̈ + b + g)/∂q and ∂(M q̈ + b + g)/∂q̇ at (q, q̇, q̈)."""
        out = self.backend(q=q, dq=qd, ddq=qdd, param=params)
        tau_id = np.einsum("...ij,...j->...i", out["M"], np.asarray(qdd, float)) + out["h"]
        return {"tau_id": tau_id, "dID_dq": out["dID_dq"], "dID_dqd": out["dID_ddq"]}

    def __call__(self, q, qd, tau=None, params=None) -> dict:
        """Forward dynamics and its derivatives (the A, B of a linearisation)."""
        first = self.backend(q=q, dq=qd, tau=tau, param=params)
        M = first["M"]
        qdd = np.linalg.solve(M, (first["f"] - first["h"])[..., None])[..., 0]
        second = self.backend(q=q, dq=qd, ddq=qdd, tau=tau, param=params)
        rhs_q = second["df_dq"] - second["dID_dq"]
        out = {"qdd": qdd,
               "dqdd_dq": np.linalg.solve(M, rhs_q),
               "dqdd_dqd": -np.linalg.solve(M, second["dID_ddq"])}
        if self.m:
            out["dqdd_dtau"] = np.linalg.solve(M, second["St"])
        else:
            out["dqdd_dtau"] = np.zeros(M.shape[:-1] + (0,))
        return out


def derivatives(source, values: dict | None = None, *, backend: str = "compiled", name: str = "eom",
                cache_dir=None) -> Derivatives:
    """Derivatives of forward and inverse dynamics, generated from the symbolic equations.

    The partial derivatives of M q̈ + b + g − Sᵀτ are differentiated symbolically (chain rule over
    the CSE tape) and generated as one function; forward-dynamics derivatives follow from
    ∂q̈/∂x = M⁻¹ ∂(Sᵀτ − M q̈ − b − g)/∂x at the q̈ of the state.

    Parameters
    ----------
    source : Model, EquationsOfMotion, Mechanism, TMTSystem, PneSystem or CodeSpec
        What to generate code for (anything :func:`as_spec` accepts). A model is derived
        symbolically first (``multibody.symbolic.derive``; seconds for a few bodies).
    values : dict, optional
        Default parameter values, {parameter symbol or name: number}, for equations that keep
        symbolic parameters (they become the ``param`` input's default). A built-in
        ``symbolic=True`` model brings its own; must be None for a ``CodeSpec``.
    backend : {"compiled", "numpy"}, optional
        ``"compiled"`` (system C compiler, cached; default) or ``"numpy"`` (no compiler needed).
    name : str, optional
        Name of the generated function (an identifier; default ``"eom"``).
    cache_dir : str or os.PathLike, optional
        Cache folder of the compiled backend.

    Returns
    -------
    Derivatives
        Callable ``d(q, qd, tau=None, params=None)`` → dict ``qdd`` (..., n), ``dqdd_dq``,
        ``dqdd_dqd`` (..., n, n), ``dqdd_dtau`` (..., n, m): the A and B of a linearisation (per
        second and per unit of the coordinates); ``d.inverse(q, qd, qdd, params=None)`` → dict
        ``tau_id`` (..., n), ``dID_dq``, ``dID_dqd`` (..., n, n).

    Raises
    ------
    TypeError
        ``source`` is none of the accepted kinds (the message lists them), or ``values`` is given
        with a ``CodeSpec``.
    ValueError
        ``backend`` is neither ``"compiled"`` nor ``"numpy"``.
    CompilerNotFoundError
        ``backend="compiled"`` and there is no C compiler.

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> from multibody import codegen
    >>> d = codegen.derivatives(mb.models.double_pendulum(), backend="numpy")
    >>> out = d(np.array([0.3, -0.2]), np.array([0.1, 0.5]), np.array([1.0, 0.0]))
    >>> out["dqdd_dq"].shape, out["dqdd_dtau"].shape
    ((2, 2), (2, 2))
    """
    from .api import as_spec

    base = as_spec(source, values=values, name=name)
    spec = derivative_spec(base)
    if backend == "numpy":
        from .numpy_gen import NumpyFunction

        fn = NumpyFunction(spec)
    elif backend == "compiled":
        from .compiled import compile as _compile

        fn = _compile(spec, cache_dir=cache_dir)
    else:
        raise ValueError(f"backend: expected 'compiled' or 'numpy', got {backend!r}")
    return Derivatives(spec, fn)
