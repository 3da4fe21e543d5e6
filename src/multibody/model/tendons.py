"""Fixed tendons with a spring and a damper: MuJoCo's ``<tendon><fixed stiffness damping springlength>``.

A fixed tendon's length is a linear function of hinge and slide joint positions, L = Σ_j c_j q_j,
so its velocity is L̇ = Σ_j c_j q̇_j and a tension f acts on joint j as the generalized force
c_j f.  MuJoCo's tendon spring has a dead band [L_lo, L_hi] (``springlength``; one number:
L_lo = L_hi) and its damper is linear in L̇:

    f = −k (L − L_hi)  if L > L_hi,    −k (L − L_lo)  if L < L_lo,    0 otherwise;    f −= d L̇

(``mj_passive``: the tendon's part of ``qfrc_spring`` and ``qfrc_damper``).  ``Model.tendons``
holds them; ``multibody.simulation.limits.tendon_forces`` sums their generalized forces, which
``rnea``/``aba`` take as part of τ.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .joints import JointType

__all__ = ["FixedTendon"]


@dataclass(frozen=True)
class FixedTendon:
    """L = Σ coef_j q_j over the named hinge/slide ``joints``, with spring ``stiffness`` k (N/m or
    N·m/rad per unit length), dead band ``spring_length`` (L_lo, L_hi) and ``damping`` d.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> from multibody.model.tendons import FixedTendon
    >>> t = FixedTendon("fins", ("joint1", "joint2"), (0.5, 0.5), stiffness=2.0)
    >>> t.forces(mb.models.planar(2), np.array([0.2, 0.4]), np.zeros(2)).round(12).tolist()   # f = −2 · 0.3
    [-0.3, -0.3]
    """
    name: str
    joints: tuple
    coef: tuple
    stiffness: float = 0.0
    damping: float = 0.0
    spring_length: tuple = (0.0, 0.0)

    def __post_init__(self):
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen)
        put("joints", tuple(self.joints))
        put("coef", tuple(float(c) for c in self.coef))
        if len(self.joints) != len(self.coef) or not self.joints:
            raise ValueError(f"tendon {self.name!r}: joints and coef must be non-empty and of equal length, got "
                             f"{len(self.joints)} joints and {len(self.coef)} coefficients")
        lo, hi = (float(x) for x in self.spring_length)
        for label, x in (("stiffness", self.stiffness), ("damping", self.damping)):
            if not (np.isfinite(x) and x >= 0):
                raise ValueError(f"tendon {self.name!r}: {label} must be a finite number ≥ 0, got {x!r}")
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi) or not np.all(np.isfinite(self.coef)):
            raise ValueError(f"tendon {self.name!r}: spring_length must be finite (lo ≤ hi) and coef finite, got "
                             f"{self.spring_length!r}, {self.coef!r}")
        put("spring_length", (lo, hi))

    def _indices(self, model):
        qi, vi = [], []
        for j in self.joints:
            k = model.joint_index(j)
            if JointType(model.jtype[k]) not in (JointType.REVOLUTE, JointType.PRISMATIC):
                raise ValueError(f"tendon {self.name!r}: joint {j!r} is {JointType(model.jtype[k]).name}; a fixed "
                                 "tendon spans hinge and slide joints only")
            qi.append(int(model.q_start[k]))
            vi.append(int(model.v_start[k]))
        return np.array(qi), np.array(vi)

    @staticmethod
    def _sum(coef, x, index):
        """Σ coef_j x[..., index_j] added term by term in order (csrc/sim/rollout.c's order: its bits)."""
        out = 0.0
        for c, i in zip(coef, index):
            out = out + c * x[..., i]
        return out

    def length(self, model, q):
        """L = Σ coef_j q_j (…,)."""
        qi, _ = self._indices(model)
        return self._sum(self.coef, np.asarray(q, dtype=float), qi)

    def tension(self, model, q, v):
        """f (…,): the spring's pull toward the dead band minus the damper's d L̇."""
        qi, vi = self._indices(model)
        L = self._sum(self.coef, np.asarray(q, dtype=float), qi)
        Ld = self._sum(self.coef, np.asarray(v, dtype=float), vi)
        lo, hi = self.spring_length
        return -self.stiffness * (np.maximum(L - hi, 0.0) + np.minimum(L - lo, 0.0)) - self.damping * Ld

    def forces(self, model, q, v):
        """Generalized forces (…, nv): coef_j · f on joint j."""
        _, vi = self._indices(model)
        f = self.tension(model, q, v)
        out = np.zeros(np.shape(f) + (model.nv,))
        np.add.at(out, (..., vi), f[..., None] * np.array(self.coef))
        return out
