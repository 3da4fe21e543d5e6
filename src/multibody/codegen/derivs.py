"""Derivatives of the equations of motion: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ and ∂(M q̈ + b + g)/∂(q, q̇).

Inverse dynamics ID(q, q̇, q̈) = M(q) q̈ + b(q, q̇) + g(q) is differentiated symbolically (SymEngine),
with q̈ as an extra input; forward dynamics q̈ = M⁻¹(Sᵀτ − b − g) then follows without a symbolic
inverse (Carpentier & Mansard's identity, differentiating M q̈ + b + g = f at the solution):

    ∂q̈/∂q = M⁻¹ (∂f/∂q − ∂ID/∂q |_{q̈ = FD}),   ∂q̈/∂q̇ = −M⁻¹ ∂b/∂q̇,   ∂q̈/∂τ = M⁻¹ Sᵀ

(A = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]] and B = [[0], [∂q̈/∂τ]] linearise ẋ = (q̇, q̈).) The derivative
expressions go through the same CSE and backends as M, b, g.
"""
from __future__ import annotations

import numpy as np
import symengine as se

from .spec import CodeSpec, _to_se

__all__ = ["derivatives", "Derivatives", "derivative_spec"]


def derivative_spec(base: CodeSpec, name: str | None = None) -> CodeSpec:
    """Spec with inputs q, dq, ddq, tau, param and outputs M, h = b + g, f, Sᵀ, ∂ID/∂q, ∂ID/∂q̇, ∂f/∂q."""
    ins = dict(base.inputs)
    outs = {nm: ex for nm, _, ex in base.outputs}
    for need in ("M", "b", "g", "f"):
        if need not in outs:
            raise ValueError(f"derivatives: the spec has no output {need!r} (needs M, b, g, f)")
    q, dq, tau = ins["q"], ins["dq"], ins["tau"]
    n = len(q)
    taken = {str(s) for ss in ins.values() for s in ss}
    ddq = []
    for k in range(n):
        nm = f"ddq{k}"
        while nm in taken:
            nm = "_" + nm
        ddq.append(se.Symbol(nm))
    M = outs["M"]
    h = [outs["b"][i] + outs["g"][i] for i in range(n)]
    ID = [sum((M[i * n + j] * ddq[j] for j in range(n)), se.Integer(0)) + h[i] for i in range(n)]
    f = outs["f"]
    m = len(tau)
    St = [se.diff(f[i], tau[j]) if m else 0 for i in range(n) for j in range(m)]
    dID_dq = [se.diff(ID[i], q[j]) for i in range(n) for j in range(n)]
    dID_ddq = [se.diff(outs["b"][i], dq[j]) for i in range(n) for j in range(n)]
    df_dq = [se.diff(f[i], q[j]) for i in range(n) for j in range(n)]
    spec = CodeSpec(name or f"{base.name}_derivatives",
                    [("q", q), ("dq", dq), ("ddq", ddq), ("tau", tau), ("param", ins.get("param", []))],
                    [("M", (n, n), M), ("h", (n, 1), h), ("f", (n, 1), list(f)), ("St", (n, max(m, 0)), St),
                     ("dID_dq", (n, n), dID_dq), ("dID_ddq", (n, n), dID_ddq), ("df_dq", (n, n), df_dq)],
                    dict(base.defaults), dict(base.info))
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

    ``backend``: "compiled" (system C compiler, cached) or "numpy".

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
