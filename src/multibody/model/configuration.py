"""Configuration space: q ⊕ v·dt and its inverse (q₁ ⊖ q₀) for joints with nq ≠ nv.

Free, spherical and planar joints integrate their body-frame velocity exactly for a constant
twist (exponential map), so quaternions stay unit and no drift is introduced.
"""
from __future__ import annotations

import numpy as np

from .. import _boundary as B
from .. import _checks
from ..core import _core  # the exponential maps are in csrc/kernels/kinematics.c (mb_integrate)
from .joints import spec
from .model import enforced_position_limits
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model

def integrate(model: Model, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> NDArray[np.float64]:
    """q ⊕ v·dt: move configuration ``q`` with velocity ``v`` for time ``dt`` (exact for constant v).

    Vector joints add v·dt; spherical and free joints compose the exponential of their angular
    velocity (in body coordinates) with their quaternion, as Pinocchio's ``integrate`` does.

    Parameters
    ----------
    model : Model
        The mechanism.
    q : array_like, shape (nq,) or (..., nq)
        Configuration (quaternions w, x, y, z).
    v : array_like, shape (nv,) or (..., nv)
        Velocity in the model's velocity coordinates.
    dt : float, optional
        Time, s (default 1).

    Returns
    -------
    ndarray, shape (..., nq)
        The configuration reached, quaternions of unit norm.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument is not numeric.
    ValueError
        A wrong shape, NaN or inf, or a zero quaternion in ``q``.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.singlebody()
    >>> q1 = mb.integrate(m, m.neutral(), [0, 0, np.pi, 0, 0, 0])   # half a turn about body z
    >>> np.round(q1[3:], 12).tolist()
    [0.0, 0.0, 0.0, 1.0]
    """
    _checks.model(model)
    args, batch = B.states(model, q=q, v=v)
    dt = _checks.number("dt", dt)
    return _core.integrate(model._c, args["q"], args["v"], dt).reshape(batch + (model.nq,))


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> NDArray[np.float64]:
    """v such that ``integrate(model, q0, v) == q1`` (the configuration-space logarithm q₁ ⊖ q₀).

    Solved by Newton iteration on the exact integrator, so it is its inverse by construction.

    Parameters
    ----------
    model : Model
        The mechanism.
    q0, q1 : array_like, shape (nq,) or (..., nq)
        Start and end configurations (broadcast against each other).

    Returns
    -------
    ndarray, shape (..., nv)
        The velocity that takes ``q0`` to ``q1`` in unit time.

    Raises
    ------
    TypeError
        ``model`` is not a Model, or an argument is not numeric.
    ValueError
        A wrong shape, NaN or inf, or a zero quaternion.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.singlebody()
    >>> q1 = mb.integrate(m, m.neutral(), [0.1, 0.2, 0.3, 1, 2, 3])
    >>> np.round(mb.difference(m, m.neutral(), q1), 9).tolist()
    [0.1, 0.2, 0.3, 1.0, 2.0, 3.0]
    """
    _checks.model(model)
    a0, b0 = B.as_batch("q0", q0, (model.nq,))
    a1, b1 = B.as_batch("q1", q1, (model.nq,))
    batch = B.batch_shape(b0, b1)
    q0 = np.broadcast_to(a0.reshape(b0 + (model.nq,)), batch + (model.nq,))
    q1 = np.broadcast_to(a1.reshape(b1 + (model.nq,)), batch + (model.nq,))
    # first guess: naive difference with quaternion logs, then Newton on the exact map
    v = np.zeros(batch + (model.nv,))
    simple = [(int(model.q_start[i]), int(model.v_start[i]), int(model.nv_joint[i]))
              for i in range(model.nb) if spec(model.jtype[i]).vector]
    for qs, vs, n in simple:
        v[..., vs:vs + n] = q1[..., qs:qs + n] - q0[..., qs:qs + n]
    eps = 1e-7
    for _ in range(30):
        r = _residual(model, q0, v, q1)
        if np.max(np.abs(r), initial=0.0) < 1e-13:
            break
        Jm = np.empty(batch + (model.nv, model.nv))
        for k in range(model.nv):  # finite-difference Jacobian, columns over dofs (not states)
            dv = np.zeros(model.nv)
            dv[k] = eps
            Jm[..., :, k] = (_residual(model, q0, v + dv, q1) - r) / eps
        v = v - np.linalg.solve(Jm, r[..., None])[..., 0]
    return v


def _residual(model, q0, v, q1):
    """Local-coordinates error between integrate(q0, v) and q1, one entry per velocity variable."""
    qa = integrate(model, q0, v)
    out = np.empty(qa.shape[:-1] + (model.nv,))
    for i in range(model.nb):
        qs, vs, o = int(model.q_start[i]), int(model.v_start[i]), spec(model.jtype[i]).quat
        if o >= 0:  # spherical, free: the quaternion's error, then a free joint's position
            s = qs + o
            a, b = qa[..., s:s + 4], q1[..., s:s + 4]
            sign = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -1.0, 1.0)
            # vector part of conj(b)⊗a: body-frame rotation error
            w = (b[..., :1] * a[..., 1:] - a[..., :1] * b[..., 1:] - np.cross(b[..., 1:], a[..., 1:])) * sign
            out[..., vs:vs + 3] = 2 * w
            if o > 0:
                out[..., vs + 3:vs + 6] = qa[..., qs:qs + 3] - q1[..., qs:qs + 3]
        else:
            n = int(model.nv_joint[i])
            out[..., vs:vs + n] = qa[..., qs:qs + n] - q1[..., qs:qs + n]
    return out


def random_configuration(model: Model, rng: np.random.Generator | int | None = None,
                         size: int | tuple[int, ...] | None=None, *,
                         translation: tuple[float, float]=(-1.0, 1.0)) -> NDArray[np.float64]:
    """A configuration (…, nq) drawn at random within the model's position limits.

    Each coordinate is uniform between its limits (:func:`~multibody.model.model.enforced_position_limits`).
    A coordinate without limits is uniform on a default interval: an angle (revolute, helical,
    cylindrical and planar angles) on [−π, π], a length (prismatic, cylindrical slide, planar and free
    translations) on ``translation`` (metres, [−1, 1] by default).  With one finite bound, the other
    is that bound ∓ the default interval's width.  Quaternions (spherical, free) are uniform on the
    unit sphere (uniform random rotations).  Pinocchio's ``randomConfiguration`` draws the same way
    where the limits are finite (it refuses infinite ones).

    Parameters
    ----------
    model : Model
        The model whose limits bound the draw.
    rng : numpy.random.Generator, int or None
        The generator, a seed, or None (a fresh generator).
    size : int, tuple of int or None
        The batch shape (None: one configuration).
    translation : (float, float)
        (lower, upper) in metres for lengths without limits.

    Returns
    -------
    ndarray, shape (nq,) or (*size, nq)
        Configurations within the limits, unit quaternions where the joints have them.

    Raises
    ------
    TypeError
        ``model`` is not a Model or ``rng`` is neither a generator, a seed nor None.
    ValueError
        A negative size, a ``translation`` box with lower ≥ upper, or limits too wide to draw from.

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.singlebody()                           # a free body
    >>> q = mb.random_configuration(m, np.random.default_rng(0), size=100)
    >>> q.shape, bool(np.allclose(np.linalg.norm(q[:, 3:], axis=1), 1)), bool(np.abs(q[:, :3]).max() <= 1)
    ((100, 7), True, True)
    """
    _checks.model(model)
    if not isinstance(rng, np.random.Generator):
        if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
            raise TypeError(f"rng: expected a numpy.random.Generator, a seed (int) or None, got {type(rng).__name__}")
        rng = np.random.default_rng(rng)
    batch = () if size is None else tuple(np.atleast_1d(np.asarray(size, dtype=np.int64)).tolist())
    if any(n < 0 for n in batch):
        raise ValueError(f"size: expected a batch shape of sizes ≥ 0, got {size!r}")
    box = _checks.array("translation", translation, (2,), what="(lower, upper) in metres")
    lo_t, hi_t = float(box[0]), float(box[1])
    if not lo_t < hi_t:
        raise ValueError(f"translation: expected (lower, upper) in metres with lower < upper, got {translation!r}")
    lower, upper = enforced_position_limits(model)
    default_lo, default_hi = np.zeros(model.nq), np.zeros(model.nq)   # quaternion entries: drawn below
    quaternions = []
    for i in range(model.nb):
        qs = int(model.q_start[i])
        for op, k in spec(model.jtype[i]).pose:
            if op in ("rot", "rotz"):
                default_lo[qs + k], default_hi[qs + k] = -np.pi, np.pi
            elif op in ("slide", "xyz", "xy"):
                n = {"slide": 1, "xy": 2, "xyz": 3}[op]
                default_lo[qs + k:qs + k + n], default_hi[qs + k:qs + k + n] = lo_t, hi_t
            elif op == "quat":
                quaternions.append(qs + k)
    width = default_hi - default_lo
    lo = np.where(np.isfinite(lower), lower, np.where(np.isfinite(upper), upper - width, default_lo))
    hi = np.where(np.isfinite(upper), upper, np.where(np.isfinite(lower), lower + width, default_hi))
    with np.errstate(over="ignore"):
        wide = np.flatnonzero(~np.isfinite(hi - lo))
    if wide.size:
        k = int(wide[0])
        raise ValueError(f"position limits: variable {k} has limits {lower[k]:g} … {upper[k]:g}, too wide to draw "
                         "from uniformly; give finite limits or none")
    q = rng.uniform(lo, hi, size=batch + (model.nq,))
    for s in quaternions:   # normal in R⁴, normalised: uniform on S³ (uniform rotations)
        x = rng.normal(size=batch + (4,))
        q[..., s:s + 4] = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return q
