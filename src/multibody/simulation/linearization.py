"""``mb.linearize``: the state-space model ẋ = A x + B u of a mechanism at an operating point.

With x = [δq, δq̇] (δq in velocity coordinates, i.e. the tangent space for quaternion joints)
and u = δτ, forward dynamics q̈ = M⁻¹(τ − C(q, q̇)) gives

    A = ⎡ 0              I            ⎤      B = ⎡ 0   ⎤
        ⎣ −M⁻¹ ∂ID/∂q    −M⁻¹ ∂ID/∂q̇  ⎦          ⎣ M⁻¹ ⎦

where ID(q, q̇, q̈₀) is inverse dynamics (``mb.rnea``) at the operating point's acceleration q̈₀ =
FD(q, q̇, τ): differentiating ID(q, q̇, FD(q, q̇, τ)) = τ gives ∂FD/∂x = −M⁻¹ ∂ID/∂x.  By default all
of it is analytic (``mb.aba_derivatives``).  With ``method="fd"``, M comes from
``mb.crba``, ∂ID/∂q̇ is exact up to round-off by central differences (ID is quadratic in q̇);
∂ID/∂q is taken by central differences with Richardson extrapolation (error O(h⁴), h = 1e-3), on
the manifold (q ⊕ h·e_k) for quaternion joints.
"""
from __future__ import annotations

import numpy as np

from .. import _checks
from ..dynamics import aba
from ..dynamics import aba_derivatives
from ..dynamics import crba
from ..dynamics import rnea
from ..model.configuration import integrate


def linearize(model, q, qd, tau=None, f_ext=None, *, method="analytic", step=1e-3):
    """(A, B) of ẋ = A x + B u about (q, q̇, τ): x = [δq, δq̇] (2·nv), u = δτ (nv).

    ``method="analytic"`` (default) takes ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ from
    :func:`multibody.aba_derivatives` (exact, δq in the body-frame tangent space of
    :func:`multibody.integrate`); ``method="fd"`` takes the central differences of the module
    docstring (``step`` is their h), for comparison.

    Example — a pendulum hanging down: ẍ = −(m g d / I) x, so A[1, 0] = −ω².

    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder("pendulum", gravity=(0, 0, -9.81))
    >>> _ = b.add_body("rod", None, "Rx", mass=2.0, com=[0, 0, -0.5], inertia=np.diag([0.1, 0.1, 0.01]))
    >>> A, B = mb.linearize(b.build(), [0.0], [0.0])
    >>> I_hinge = 0.1 + 2.0 * 0.5 ** 2
    >>> bool(np.isclose(A[1, 0], -2.0 * 9.81 * 0.5 / I_hinge)), bool(np.isclose(B[1, 0], 1 / I_hinge))
    (True, True)
    """
    nv = model.nv
    q = _checks.vector("q", q, model.nq)
    qd = _checks.vector("qd", qd, nv)
    tau = np.zeros(nv) if tau is None else _checks.vector("tau", tau, nv)
    method = _checks.one_of("method", method, ("analytic", "fd"))
    step = _checks.number("step", step, positive=True)
    A = np.zeros((2 * nv, 2 * nv))
    A[:nv, nv:] = np.eye(nv)
    if method == "analytic":
        A[nv:, :nv], A[nv:, nv:], Minv = aba_derivatives(model, q, qd, tau, f_ext)
        return A, np.vstack([np.zeros((nv, nv)), Minv])
    qdd0 = aba(model, q, qd, tau, f_ext)
    M = crba(model, q)
    Minv = np.linalg.inv(M)
    E = np.eye(nv)

    def id_q(h):
        """Central difference of ID in q, all directions in one batched RNEA call."""
        qp = integrate(model, np.broadcast_to(q, (nv, model.nq)), h * E)
        qm = integrate(model, np.broadcast_to(q, (nv, model.nq)), -h * E)
        return (rnea(model, qp, qd, qdd0, f_ext) - rnea(model, qm, qd, qdd0, f_ext)).T / (2 * h)

    dID_dq = (4 * id_q(step / 2) - id_q(step)) / 3          # Richardson: O(h²) → O(h⁴)
    hv = 1.0
    dID_dqd = (rnea(model, q, qd + hv * E, qdd0, f_ext) - rnea(model, q, qd - hv * E, qdd0, f_ext)).T / (2 * hv)
    A[nv:, :nv] = -Minv @ dID_dq
    A[nv:, nv:] = -Minv @ dID_dqd
    B = np.vstack([np.zeros((nv, nv)), Minv])
    return A, B
