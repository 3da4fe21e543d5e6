"""Helpers shared by the example scripts: the result record and spatial_v2's floating-base path."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from multibody.model.joints import JointType
from multibody.simulation.constraints import AxisConstraint, ConstraintSet, PointConstraint


@dataclass
class ExampleResult:
    """A run and the numbers that state its physical fact (``facts``: name → value)."""
    name: str
    trajectory: object
    facts: dict = field(default_factory=dict)

    def __repr__(self):
        body = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.facts.items())
        return f"{self.name}: {body}"


def _fixed_to_floatbase(model):
    """The floatbase model (spatial_v2 layout, for ``fd_fb``) of a model whose body 0 has a free joint."""
    from multibody.models import floatbase
    if model.jtype[0] != JointType.FREE:
        raise ValueError("model: body 0 must have a free joint")
    jtype = model.jtype.copy()
    jtype[0] = int(JointType.REVOLUTE)
    jaxis = model.jaxis.copy()
    jaxis[0] = [0.0, 0.0, 1.0]
    fixed = replace(model, jtype=jtype, jaxis=jaxis, q_lower=None, q_upper=None, velocity_limit=None,
                    effort_limit=None, damping=None, friction=None, armature=None, gamma_q=None)
    return floatbase(fixed)


def free_to_xfb(model, q, qd):
    """(xfb (13), q_real, qd_real) of FDfb from a free-joint state (q, q̇) of the same body tree.

    qn: rq(qn) = A_IBᵀ (fixed → base coordinates); r: the base origin; vfb = [ω; v_O] in fixed
    coordinates with v_O the velocity of the body-fixed point at the fixed origin.
    """
    from multibody.kinematics.forward import body_states
    from multibody.spatial.rotations import matrix_to_quat
    s = body_states(model, q, qd)
    R, p = s.R[0], s.p[0]
    w, v = R @ s.v[0, :3], R @ s.v[0, 3:]
    vO = v - np.cross(w, p)
    x = np.concatenate([matrix_to_quat(R.T), p, w, vO])
    return x, np.asarray(q, float)[7:], np.asarray(qd, float)[6:]


def simulate_fb(model, xfb0, q0=None, qd0=None, t_final=1.0, dt=1e-2, tau=None, contact=None,
                method="DOP853", rtol=1e-10, atol=1e-12):
    """Integrate spatial_v2's FDfb state (xfb, q, q̇[, contact states]) with SciPy's ``solve_ivp``.

    ``model`` follows floatbase's convention; ``tau`` is None, constant, or a callable (t, xfb, q,
    q̇); ``contact`` a :class:`GroundContact` built on this model (its ``forces_fb`` is used, the
    gcFD path).  Returns a dict of sampled arrays ``t``, ``xfb``, ``q``, ``qd``, ``z`` (every
    ``dt``).  The quaternion is kept unit by FDfb's own stabilisation term (``rqd``).
    """
    from scipy.integrate import solve_ivp

    from multibody.dynamics.floating import check_floatbase_model, fd_fb
    check_floatbase_model(model)
    nr = model.nv - 6
    q0 = np.zeros(model.nq - 6) if q0 is None else np.asarray(q0, float)
    qd0 = np.zeros(nr) if qd0 is None else np.asarray(qd0, float)
    nz = contact.n_states if contact is not None else 0
    y0 = np.concatenate([np.asarray(xfb0, float), q0, qd0, np.zeros(nz)])
    nq = model.nq - 6

    def rhs(t, y):
        x, q, qd, z = y[:13], y[13:13 + nq], y[13 + nq:13 + nq + nr], y[13 + nq + nr:]
        f_ext, zdot = None, np.zeros(0)
        if contact is not None:
            f_ext, zdot, _ = contact.forces_fb(model, x, q, qd, z)
        u = np.zeros(nr) if tau is None else (tau(t, x, q, qd) if callable(tau) else np.asarray(tau, float))
        xd, qdd = fd_fb(model, x, q, qd, u, f_ext=f_ext)
        return np.concatenate([xd, qd, qdd, zdot])

    t_eval = np.linspace(0.0, t_final, int(round(t_final / dt)) + 1)
    sol = solve_ivp(rhs, (0.0, t_final), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"simulate_fb: the integrator failed: {sol.message}")
    Y = sol.y.T
    return {"t": sol.t, "xfb": Y[:, :13], "q": Y[:, 13:13 + nq], "qd": Y[:, 13 + nq:13 + nq + nr],
            "z": Y[:, 13 + nq + nr:]}


def clemens_closures(model, l=1.0, l_p=1.0):
    """The Clemens joint's loop closures for legs 2 and 3 as numeric constraints (10 rows).

    For each leg: its end (0, 0, l) on ``leg{i}_link2`` coincides with the platform's joint point
    (−l_p + l_p cos a, l_p sin a, 0) (a :class:`PointConstraint`), and the leg's last revolute
    axis (local y of ``leg{i}_link2``) is orthogonal to the platform's radial (cos a, sin a, 0)
    and normal (0, 0, 1) directions (an :class:`AxisConstraint`) — the rows of
    ``mb.models.clemens_joint().constraints``.
    """
    parts = []
    for i, a in ((2, 2 * np.pi / 3), (3, -2 * np.pi / 3)):
        parts.append(PointConstraint(f"leg{i}_link2", [0, 0, l], "platform",
                                     [-l_p + l_p * np.cos(a), l_p * np.sin(a), 0], name=f"leg{i}_position"))
        parts.append(AxisConstraint(f"leg{i}_link2", [0, 1, 0], "platform",
                                    [[np.cos(a), np.sin(a), 0], [0, 0, 1]], name=f"leg{i}_axis"))
    return ConstraintSet(*parts)

