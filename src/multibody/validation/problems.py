"""The validation problems: one function per row of ``docs/validation.md``.

Each function runs our computation, builds its reference independently (closed forms, published
numbers, or a second computation written here for the problem — never ``mb.simulate``) and returns a
:class:`~multibody.validation.Row`.  :data:`PROBLEMS` lists them in the table's order.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

from . import Row, benchmark_error

__all__ = ["PROBLEMS", "run", "a01_reference", "a02_reference", "euler_top_reference", "ANDREWS_REFERENCE",
           "heavy_top_precession", "kepler_reference"]

IFTOMM = ("IFToMM/Univ. A Coruña MBS benchmark {} (lim.ii.udc.es/mbsbenchmark, {}_specification.xml; "
          "González et al., Multibody Syst. Dyn. 16:179, 2006)")


def _cpu(f, *args, **kwargs):
    """(f's value, CPU seconds it took: process time, not wall clock — the machine may be shared)."""
    t0 = time.process_time()
    out = f(*args, **kwargs)
    return out, time.process_time() - t0


# ------------------------------------------------------------------------------------ A01
def a01_reference(t: np.ndarray, length: float = 1.0, g: float = 9.81) -> np.ndarray:
    """P1's (x, y) of the A01 pendulum released at rest from horizontal (x = +L), in closed form.

    With φ the angle from the downward vertical, sin(φ/2) = k sn(K − ω₀t | k²), k = sin(φ₀/2) =
    sin(π/4), ω₀ = √(g/L) (the pendulum's Jacobi elliptic solution; e.g. Lawden, *Elliptic
    Functions and Applications*, §5.2), so x = L sin φ = 2kL sn dn, y = −L cos φ = L(2k² sn² − 1).
    The argument is reduced modulo the period 4K before ``scipy.special.ellipj`` sees it.

    Parameters
    ----------
    t : array_like
        Times (s).
    length, g : float, optional
        The bar length (m) and gravity (m/s²).

    Returns
    -------
    ndarray (n, 2)
        P1's x and y (m).

    Examples
    --------
    >>> [round(float(v), 12) for v in a01_reference([0.0])[0]]          # released at (L, 0)
    [1.0, 0.0]
    """
    m = 0.5                                       # k² = sin²(π/4)
    K = ellipk(m)
    u = np.mod(K - np.sqrt(g / length) * np.asarray(t, dtype=float), 4 * K)
    sn, _, dn, _ = ellipj(u, m)
    k = np.sqrt(m)
    return np.column_stack([2 * k * length * sn * dn, length * (2 * m * sn * sn - 1)])


def a01(quick: bool = False) -> Row:
    """A01: 2000 s (``quick``: 20 s), P1's x and y at 4000 output steps against the closed form."""
    import multibody as mb
    from ..models.iftomm import a01_pendulum
    T, n_out = (20.0, 40) if quick else (2000.0, 4000)
    dt = 1e-3
    model = a01_pendulum()
    traj, cpu = _cpu(mb.simulate, model, [0.0], [0.0], T, dt=dt, integrator="rk4", record_every=round(T / n_out / dt))
    xy = np.column_stack([np.cos(traj.q[:, 0]), np.sin(traj.q[:, 0])])
    err = benchmark_error(xy, a01_reference(traj.t), threshold=1e-3)
    return Row("A01", "A01 simple pendulum", IFTOMM.format("A01", "A01"),
               "closed form (Jacobi elliptic sn, dn)", f"mb.simulate rk4, h = {dt:g} s, {T:g} s",
               f"max relative error of P1 (x, y) over {n_out} output steps, threshold 1e-3", err, 1e-1, 1e-3, cpu)


# ------------------------------------------------------------------------------------ A02
def a02_reference(t: np.ndarray, n: int = 40, length: float = 1.0, g: float = 9.81) -> np.ndarray:
    """B0's (x, y, ẋ, ẏ) of the A02 N-four-bar from its own one-coordinate equation of motion.

    The windows stay parallelograms, so every crank turns by the same angle θ and every coupler
    translates with the cranks' ends: T = ½ θ̇² m L² ((N+1)/3 + N), V = m g L sin θ ((N+1)/2 + N),
    hence θ̈ = −(g/L) cos θ ((N+1)/2 + N)/((N+1)/3 + N) — regular through the flat positions where
    the closure equations are singular.  Integrated from θ = π/2, θ̇ = −1/L by SciPy's DOP853 at
    rtol = atol = 1e-12 (a computation written for this problem, independent of ours).

    Parameters
    ----------
    t : array_like
        Increasing output times (s), from 0.
    n : int, optional
        The number of windows N.
    length, g : float, optional
        Link length (m), gravity (m/s²).

    Returns
    -------
    ndarray (n_t, 4)
        B0's x, y (m) and ẋ, ẏ (m/s).

    Examples
    --------
    >>> [round(float(v), 12) + 0.0 for v in a02_reference([0.0, 0.1])[0]]   # crank up, B0 at +1 m/s
    [0.0, 1.0, 1.0, 0.0]
    """
    c = g / length * ((n + 1) / 2 + n) / ((n + 1) / 3 + n)
    t = np.asarray(t, dtype=float)
    sol = solve_ivp(lambda _, y: [y[1], -c * np.cos(y[0])], (0.0, float(t[-1])), [np.pi / 2, -1.0 / length],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    th, w = sol.y
    return length * np.column_stack([np.cos(th), np.sin(th), -np.sin(th) * w, np.cos(th) * w])


def a02(quick: bool = False) -> Row:
    """A02: N = 40, 20 s (``quick``: 2 s), B0's position and velocity at 400 output steps."""
    import multibody as mb
    from ..models.iftomm import a02_n_four_bar, a02_start
    n = 40
    T, n_out = (2.0, 40) if quick else (20.0, 400)
    dt = 5e-3
    model = a02_n_four_bar(n)
    q0, qd0 = a02_start(model)
    cons = mb.ConstraintSet(*model.constraints, redundant="least_squares")
    traj, cpu = _cpu(mb.simulate, model, q0, qd0, T, dt=dt, integrator="rk4", constraints=cons,
                     record_every=round(T / n_out / dt))
    th, w = traj.q[:, 0], traj.qd[:, 0]
    b0 = np.column_stack([np.cos(th), np.sin(th), -np.sin(th) * w, np.cos(th) * w])
    err = benchmark_error(b0, a02_reference(traj.t, n), threshold=1e-3)
    ref_t = np.linspace(0.0, T, 20 * n_out + 1)
    ref_th = np.unwrap(np.arctan2(*a02_reference(ref_t, n)[:, [1, 0]].T))
    flats = int(np.sum(np.diff(np.floor(ref_th / np.pi)) != 0))       # passes through θ = kπ (flat)
    return Row("A02", f"A02 N-four-bar, N = {n} (through its singular flat positions {flats} times)", IFTOMM.format("A02", "A02"),
               "its one-coordinate ODE (parallelogram windows), SciPy DOP853 rtol 1e-12",
               f"mb.simulate rk4, h = {dt:g} s, {T:g} s; KKT (csrc/sim/constraints.c) with Baumgarte; "
               f"redundant='least_squares' (minimum-norm multipliers where J H⁻¹Jᵀ is singular)",
               f"max relative error of B0 (x, y, ẋ, ẏ) over {n_out} output steps, threshold 1e-3",
               err, 1e-1, 1e-3, cpu)


# ------------------------------------------------------------------------------------ A03
#: the Test Set for IVP Solvers' reference solution of "andrews" at t = 0.03 (PSIDE at tolerances
#: 1e-14 on a Cray C90): β, Θ, γ, Φ, δ, Ω, ε and their rates, in the paper's order
ANDREWS_REFERENCE = (0.1581077119629904e+02, -0.1575637105984298e+02, 0.4082224013073101e-01,
                     -0.5347301163226948e+00, 0.5244099658805304e+00, 0.5347301163226948e+00,
                     0.1048080741042263e+01, 0.1139920302151208e+04, -0.1424379294994111e+04,
                     0.1103291221937134e+02, 0.1929337464421385e+02, 0.5735699284790808e+00,
                     -0.1929337464421385e+02, 0.3231791658026955e+00)


def a03(quick: bool = False) -> Row:
    """A03: 0.03 s from Hairer–Wanner's start; the 7 angles and 7 rates against the Test Set's values."""
    import multibody as mb
    from ..models.iftomm import ANDREWS_ORDER, ANDREWS_Q0, a03_andrews, a03_forces
    model = a03_andrews()
    order = list(ANDREWS_ORDER)
    q0 = np.array(ANDREWS_Q0)[order]
    # Baumgarte's time constant well below the problem's time scale (the crank turns 15.8 rad in 0.03 s)
    cons = mb.ConstraintSet(*model.constraints, time_constant=1e-3)
    rtol, atol = 1e-12, 1e-14
    traj, cpu = _cpu(mb.simulate, model, q0, np.zeros(7), 0.03, dt=3e-4, integrator="dop853", rtol=rtol, atol=atol,
                     constraints=cons, f_ext=lambda t, q, qd: a03_forces(model, q))
    y = np.concatenate([traj.q[-1][order], traj.qd[-1][order]])
    err = benchmark_error(y, ANDREWS_REFERENCE, threshold=1e-3)
    scd = -np.log10(err) if err > 0 else np.inf
    return Row("A03", "A03 Andrews' squeezing mechanism (7 bodies, 3 loops), t = 0.03 s",
               IFTOMM.format("A03", "A03") + "; Test Set for IVP Solvers (Mazzia, Magherini, Univ. Bari), "
               "problem 'andrews'; Hairer & Wanner, Solving ODEs II, §VII.7",
               "the Test Set's published reference values at t = 0.03 (14 components)",
               f"mb.simulate dop853, rtol {rtol:g}, atol {atol:g}; KKT with Baumgarte (T = 1 ms)",
               "max relative error of the 7 angles and 7 rates at t = 0.03, floor 1e-3 "
               f"({scd:.1f} significant correct digits)", err, 1e-1, 1e-3, cpu,
               note="A03's own thresholds were not reachable offline: the A-series' 1e-1 / 1e-3 are applied")


# ------------------------------------------------------------------------------------ Euler's top
TOP_INERTIA = (1.0, 2.0, 3.0)
TOP_OMEGA0 = (1.0, 0.0, 0.7)


def euler_top_reference(t: np.ndarray, inertia: tuple = TOP_INERTIA,
                        omega0: tuple = TOP_OMEGA0) -> tuple[np.ndarray, float]:
    """(ω (n, 3) in body axes, the flip interval) of a torque-free body, by Jacobi's closed form.

    Landau & Lifshitz, *Mechanics*, §37 (I₁ < I₂ < I₃, M² > 2EI₂, start at ω₂ = 0):
    ω₁ = ω₁(0) cn τ, ω₂ = √((2EI₃ − M²)/(I₂(I₃ − I₂))) sn τ, ω₃ = ω₃(0) dn τ, with
    τ = t √((I₃ − I₂)(M² − 2EI₁)/(I₁I₂I₃)) and k² = (I₂ − I₁)(2EI₃ − M²)/((I₃ − I₂)(M² − 2EI₁)).
    ω₂ changes sign — the body flips about its intermediate axis — every 2K(k)/rate seconds.

    Parameters
    ----------
    t : array_like
        Times (s).
    inertia : tuple, optional
        Principal moments I₁ < I₂ < I₃ (kg m²).
    omega0 : tuple, optional
        ω at t = 0 in body axes (rad/s), with ω₂ = 0 and M² > 2EI₂.

    Returns
    -------
    tuple
        (ω (n, 3) in body axes, rad/s; the flip interval, s).

    Raises
    ------
    ValueError
        ω₂(0) ≠ 0, or M² ≤ 2EI₂.

    Examples
    --------
    >>> w, flip = euler_top_reference([0.0])
    >>> [float(v) for v in w[0]], round(float(flip), 6)
    ([1.0, 0.0, 0.7], 5.849338)
    """
    I1, I2, I3 = inertia
    w1, w2, w3 = omega0
    if w2 != 0.0:
        raise ValueError("omega0: the closed form here starts at ω₂ = 0")
    E2 = I1 * w1 ** 2 + I3 * w3 ** 2                 # 2E
    M2 = (I1 * w1) ** 2 + (I3 * w3) ** 2
    if not M2 > E2 * I2:
        raise ValueError("omega0: expected M² > 2E I₂ (rotation about the major axis's side)")
    rate = np.sqrt((I3 - I2) * (M2 - E2 * I1) / (I1 * I2 * I3))
    m = (I2 - I1) * (E2 * I3 - M2) / ((I3 - I2) * (M2 - E2 * I1))
    sn, cn, dn, _ = ellipj(rate * np.asarray(t, dtype=float), m)
    w2max = np.sqrt((E2 * I3 - M2) / (I2 * (I3 - I2)))
    return np.column_stack([w1 * cn, w2max * sn, w3 * dn]), 2 * ellipk(m) / rate


def euler_top(quick: bool = False) -> Row:
    """A torque-free asymmetric body on a spherical joint: ω(t) over 40 s and its flip interval."""
    import multibody as mb
    from ..model.builder import ModelBuilder
    T = 15.0 if quick else 40.0             # at least two flips (one interval) either way
    dt = 1e-3
    b = ModelBuilder("euler_top", gravity=(0.0, 0.0, 0.0))
    b.add_body("top", None, "spherical", mass=1.0, inertia=np.diag(TOP_INERTIA))
    model = b.build()
    traj, cpu = _cpu(mb.simulate, model, [1.0, 0.0, 0.0, 0.0], list(TOP_OMEGA0), T, dt=dt, integrator="rk4",
                     record_every=10)
    ref, flip = euler_top_reference(traj.t)
    scale = np.abs(ref).max()
    err_w = float(np.abs(traj.qd - ref).max() / scale)
    # the flip interval measured: ω₂'s sign changes, located by linear interpolation between samples
    # (its error O(Δt²·ω̈₂) is below 1e-9 of the interval at this sampling)
    w2, t = traj.qd[:, 1], traj.t
    k = np.flatnonzero(np.sign(w2[1:]) != np.sign(w2[:-1]))
    k = k[w2[k] != 0.0]
    zeros = t[k] - w2[k] * (t[k + 1] - t[k]) / (w2[k + 1] - w2[k])
    intervals = np.diff(zeros)
    err_flip = float(np.abs(intervals - flip).max() / flip) if len(intervals) else float("nan")
    err = max(err_w, err_flip)
    return Row("top", f"Torque-free asymmetric top, I = {TOP_INERTIA}, ω₀ = {TOP_OMEGA0} rad/s "
                      f"(intermediate-axis flip every {flip:.6f} s)",
               "Euler's equations; Landau & Lifshitz, Mechanics, §37",
               "closed form (Jacobi cn, sn, dn; flip interval 2K(k)/rate)",
               f"mb.simulate rk4 on a spherical joint (quaternion), h = {dt:g} s, {T:g} s",
               f"max(|ω − ω_ref| / max|ω_ref|, relative error of the {len(intervals)} measured flip intervals)",
               err, 1e-8, 1e-8, cpu)


# ------------------------------------------------------------------------------------ heavy top
#: the heavy symmetric top: mass (kg), CoM distance from the fixed tip (m), transverse and axial
#: moments of inertia about the CoM (kg m²), tilt from the vertical (rad), spin ω₃ (rad/s)
HEAVY_TOP = dict(m=1.0, l=0.5, Ic1=0.1, I3=0.15, theta=np.radians(30.0), w3=30.0, g=9.81)


def heavy_top_precession(m: float, l: float, Ic1: float, I3: float, theta: float, w3: float,
                         g: float = 9.81) -> float:
    """The slow steady precession rate Ω (rad/s) of a heavy symmetric top, in closed form.

    Goldstein, Poole & Safko, *Classical Mechanics*, 3rd ed., §5.7: a top tilted θ from the vertical
    precesses steadily when m g l = Ω (I₃ω₃ − I₁Ω cos θ), I₁ = I_c1 + m l² about the tip; the
    smaller root Ω = (I₃ω₃ − √(I₃²ω₃² − 4 I₁ m g l cos θ)) / (2 I₁ cos θ).

    Parameters
    ----------
    m, l, Ic1, I3, theta, w3, g : float
        Mass (kg), CoM distance from the tip (m), moments of inertia about the CoM (kg m²), tilt
        (rad), spin about the symmetry axis (rad/s), gravity (m/s²).

    Returns
    -------
    float
        Ω (rad/s).

    Raises
    ------
    ValueError
        A spin too slow for steady precession (the discriminant is negative).

    Examples
    --------
    >>> round(heavy_top_precession(**HEAVY_TOP), 10)
    1.1845063393
    """
    I1 = Ic1 + m * l * l
    disc = (I3 * w3) ** 2 - 4 * I1 * m * g * l * np.cos(theta)
    if disc < 0:
        raise ValueError(f"w3: a spin of {w3} rad/s is too slow for steady precession at this tilt")
    return float((I3 * w3 - np.sqrt(disc)) / (2 * I1 * np.cos(theta)))


def heavy_top(quick: bool = False) -> Row:
    """The heavy symmetric top started in steady precession: its tilt stays and it precesses at Ω."""
    import multibody as mb
    from ..kinematics.forward import body_states
    from ..model.builder import ModelBuilder
    p = HEAVY_TOP
    T = 5.0 if quick else 20.0
    dt = 5e-4
    b = ModelBuilder("heavy_top", gravity=(0.0, 0.0, -p["g"]))
    b.add_body("top", None, "spherical", mass=p["m"], com=[0.0, 0.0, p["l"]],
               inertia=np.diag([p["Ic1"], p["Ic1"], p["I3"]]))
    model = b.build()
    Om, th = heavy_top_precession(**p), p["theta"]
    q0 = np.array([np.cos(th / 2), np.sin(th / 2), 0.0, 0.0])          # tilted θ about x
    R0 = body_states(model, q0).R[0]
    # body angular velocity: the precession Ω about the vertical plus the spin ψ̇ = ω₃ − Ω cos θ about the axis
    w0 = Om * R0.T @ [0.0, 0.0, 1.0] + (p["w3"] - Om * np.cos(th)) * np.array([0.0, 0.0, 1.0])
    traj, cpu = _cpu(mb.simulate, model, q0, w0, T, dt=dt, integrator="rk4", record_every=20)
    z = np.array([body_states(model, q).R[0][:, 2] for q in traj.q])
    tilt = np.arccos(np.clip(z[:, 2], -1.0, 1.0))
    phi = np.unwrap(np.arctan2(z[:, 1], z[:, 0]))
    phi -= phi[0]
    err = max(float(np.abs(tilt - th).max() / th), float(np.abs(phi - Om * traj.t).max() / (Om * T)))
    return Row("heavy_top", f"Heavy symmetric top in steady precession (θ = 30°, ω₃ = 30 rad/s: Ω = {Om:.10f} rad/s)",
               "Goldstein, Poole & Safko, Classical Mechanics, 3rd ed., §5.7",
               "closed form: m g l = Ω (I₃ω₃ − I₁Ω cos θ), tilt constant",
               f"mb.simulate rk4 on a spherical joint (quaternion), h = {dt:g} s, {T:g} s",
               "max(|tilt − θ|/θ, |precession angle − Ωt| / (ΩT))", err, 1e-8, 1e-8, cpu)


# ------------------------------------------------------------------------------------ Kepler
#: the two-body orbit: gravitational parameter μ (m³/s²), semi-major axis a (m), eccentricity e
KEPLER = dict(mu=1.0, a=1.0, e=0.5)


def kepler_reference(t: np.ndarray, mu: float = 1.0, a: float = 1.0, e: float = 0.5) -> np.ndarray:
    """(x, y) on a Kepler orbit started at periapsis on +x, by Kepler's equation.

    M = 2πt/P = E − e sin E (P = 2π√(a³/μ), Kepler's third law), solved for the eccentric anomaly E by
    Newton's method; x = a(cos E − e), y = a√(1 − e²) sin E (e.g. Murray & Dermott, *Solar System
    Dynamics*, §2.4).

    Parameters
    ----------
    t : array_like
        Times (s).
    mu, a, e : float
        Gravitational parameter (m³/s²), semi-major axis (m), eccentricity (0 ≤ e < 1).

    Returns
    -------
    ndarray (n, 2)
        The positions (m).

    Raises
    ------
    ValueError
        An eccentricity outside [0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> xy = kepler_reference([0.0, np.pi])       # periapsis, then apoapsis half a period later
    >>> [round(float(v), 12) for v in xy.ravel()]
    [0.5, 0.0, -1.5, 0.0]
    """
    if not 0 <= e < 1:
        raise ValueError(f"e: expected an eccentricity in [0, 1), got {e!r}")
    M = 2 * np.pi * np.asarray(t, dtype=float) / (2 * np.pi * np.sqrt(a ** 3 / mu))
    E = M.copy()
    for _ in range(60):                      # Newton from E = M converges for e < 1 (Danby's start not needed)
        E = E - (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
    return np.column_stack([a * (np.cos(E) - e), a * np.sqrt(1 - e * e) * np.sin(E)])


def kepler(quick: bool = False) -> Row:
    """A free body under an inverse-square central force (f_ext): three periods against Kepler's equation."""
    import multibody as mb
    from ..model.builder import ModelBuilder
    mu, a, e = KEPLER["mu"], KEPLER["a"], KEPLER["e"]
    P = 2 * np.pi * np.sqrt(a ** 3 / mu)
    T = P if quick else 3 * P
    b = ModelBuilder("kepler", gravity=(0.0, 0.0, 0.0))
    b.add_body("planet", None, "free", mass=1.0, inertia=0.4 * np.eye(3))
    model = b.build()
    q0 = np.array([a * (1 - e), 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    qd0 = np.array([0.0, 0.0, 0.0, 0.0, np.sqrt(mu * (1 + e) / (a * (1 - e))), 0.0])

    def f_ext(t, q, qd):        # the force through the centre of mass: no moment about the origin
        r = q[:3]
        return np.concatenate([np.zeros(3), -mu * r / np.linalg.norm(r) ** 3])[None, :]
    rtol, atol = 1e-12, 1e-14
    traj, cpu = _cpu(mb.simulate, model, q0, qd0, T, dt=P / 100, integrator="dop853", rtol=rtol, atol=atol,
                     f_ext=f_ext)
    err = float(np.abs(traj.q[:, :2] - kepler_reference(traj.t, mu, a, e)).max() / a)
    return Row("kepler", f"Kepler orbit, e = {e}, {T / P:g} period(s) (a free body, inverse-square f_ext)",
               "Kepler's equation and third law (e.g. Murray & Dermott, Solar System Dynamics, §2.4)",
               "closed form: x = a(cos E − e), y = b sin E, M = E − e sin E",
               f"mb.simulate dop853 on a free joint, rtol {rtol:g}, atol {atol:g}",
               "max |r − r_ref| / a at 100 samples per period", err, 1e-9, 1e-9, cpu)


# ------------------------------------------------------------------------------------ Whipple
WEAVE_CAPSIZE = (4.29238253634111, 6.02426201538837)


def whipple(quick: bool = False) -> Row:
    """The benchmark bicycle's weave and capsize speeds from our model's exact linearisation."""
    from ..models.bicycle import whipple_linear, whipple_speeds

    def speeds():
        M, C1, K0, K2 = whipple_linear()
        return whipple_speeds((M, C1, K0, K2, 9.81))
    (vw, vc), cpu = _cpu(speeds)
    err = max(abs(vw - WEAVE_CAPSIZE[0]), abs(vc - WEAVE_CAPSIZE[1]))
    return Row("whipple", f"Whipple bicycle: weave {vw:.14f}, capsize {vc:.14f} m/s",
               "Meijaard, Papadopoulos, Ruina, Schwab, Proc. R. Soc. A 463:1955 (2007)",
               f"published: {WEAVE_CAPSIZE[0]}, {WEAVE_CAPSIZE[1]} m/s",
               "mb.models.whipple_bicycle, exact linearisation (whipple_linear), Brent on the eigenvalues",
               "max |v − v_published| (m/s)", err, 1e-10, 1e-10, cpu)


PROBLEMS: dict[str, Callable[..., Row]] = {"A01": a01, "A02": a02, "A03": a03, "top": euler_top,
                                           "heavy_top": heavy_top, "kepler": kepler, "whipple": whipple}


def run(keys: list[str] | None = None, quick: bool = False) -> list[Row]:
    """Run the problems named in ``keys`` (default: all of :data:`PROBLEMS`, in order).

    Parameters
    ----------
    keys : sequence of str, optional
        Keys of :data:`PROBLEMS`.
    quick : bool, optional
        Shorter runs (the same references and measures) for a smoke test.

    Returns
    -------
    list of Row
        One row per problem.

    Raises
    ------
    ValueError
        An unknown key (the known ones listed).

    Examples
    --------
    >>> [r.level for r in run(["whipple"])]
    ['high']
    """
    keys = list(PROBLEMS) if keys is None else list(keys)
    unknown = [k for k in keys if k not in PROBLEMS]
    if unknown:
        raise ValueError(f"keys: unknown problem(s) {unknown}; expected some of {list(PROBLEMS)}")
    return [PROBLEMS[k](quick=quick) for k in keys]
