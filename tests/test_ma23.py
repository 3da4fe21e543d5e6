"""``mb.models.ma23`` against the slides' "COEFFICIENTS DYNAMIQUES DU MA 23" (seed 004).

The slide formulas are transcribed below in Khalil's notation (S(23) = sin(q2 + q3), SS(2) =
sin²q2, SC(4) = sin q4 cos q4 …), with the OCR's "Z" read as 2. h11, h22 and A33 of links 1–3
(and the body fixed to link 3, "6") are compared symbolically with ``derive(model)``; every other
legible group of terms is compared numerically with ``crba`` of a model whose only non-zero
inertial parameters are the group's, at random joint angles and random lengths. Where the slide
text is wrong (OCR or a slip on the slide), the printed version is checked to disagree and the
corrected one to agree.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.models import ma23, parameters, seed_info
from multibody.symbolic import derive

R = lambda name: sp.Symbol(name, real=True)  # noqa: E731
q = {k: R(f"q{k}") for k in range(1, 7)}
q[23] = q[2] + q[3]
LENGTHS = "l2 d2 d3 d5 d6 h1 h2 d_y4 l_y4".split()
INERTIAL = [f"M{k}" for k in range(1, 7)] + [f"I_{a}{k}" for k in range(1, 7) for a in "xyz"] + ["I_yz4"]
p = {n: R(n) for n in LENGTHS + INERTIAL}
globals().update({n.replace("_", ""): s for n, s in p.items()})  # Ix4 = I_x4, dy4 = d_y4, ly4 = l_y4 …


def S(k): return sp.sin(q[k])
def C(k): return sp.cos(q[k])
def SS(k): return S(k) ** 2
def CC(k): return C(k) ** 2
def SC(k): return S(k) * C(k)


# ---- the slide text, group by group ---------------------------------------------------------------
H11_LINKS_1_3 = (Ix1 + M2 * SS(2) * d2**2 + SS(2) * Iy2 + CC(2) * Iz2
                 + M3 * (SS(2) * l2**2 + 2 * S(2) * S(23) * l2 * d3 + SS(23) * d3**2) + SS(23) * Iy3 + CC(23) * Iz3
                 + M6 * (SS(2) * l2**2 + 2 * S(2) * S(23) * l2 * d6 + SS(23) * d6**2) + SS(23) * Iy6 + CC(23) * Iz6)
A33_LINKS_1_3 = M3 * d3**2 + Ix3 + M6 * d6**2 + Ix6
H22_LINKS_1_3 = A33_LINKS_1_3 + M2 * d2**2 + Ix2 + M3 * (2 * C(3) * l2 * d3 + l2**2) + M6 * (2 * C(3) * l2 * d6 + l2**2)

# (name, entry of M (or two entries: their difference), the parameters kept non-zero, the slide's expression)
CONFIRMED = [
    ("h11: M4", (0, 0), ["M4"],
     M4 * (SS(2) * l2**2 + 2 * S(2) * S(23) * l2 * h1 + 2 * S(2) * C(23) * C(4) * l2 * dy4 + SS(23) * h1**2
           + 2 * SC(23) * C(4) * dy4 * h1 + CC(23) * dy4**2 + SS(23) * SS(4) * dy4**2)),
    ("h11: I4", (0, 0), ["I_x4", "I_y4", "I_z4", "I_yz4"],
     SS(23) * SS(4) * Ix4 + SS(23) * CC(4) * Iy4 - 2 * SC(23) * C(4) * Iyz4 + CC(23) * Iz4),
    ("h11: I5", (0, 0), ["I_x5", "I_y5", "I_z5"],
     SS(23) * SS(4) * Ix5 + SS(23) * CC(4) * CC(5) * Iy5 + 2 * SC(23) * C(4) * SC(5) * Iy5 + CC(23) * SS(5) * Iy5
     + SS(23) * CC(4) * SS(5) * Iz5 - 2 * SC(23) * C(4) * SC(5) * Iz5 + CC(23) * CC(5) * Iz5),
    ("h11: M5", (0, 0), ["M5"],
     M5 * (SS(2) * l2**2 + 2 * S(2) * S(23) * l2 * h2 + 2 * S(2) * C(23) * C(4) * l2 * ly4
           + 2 * S(2) * S(23) * C(5) * l2 * d5 + 2 * S(2) * C(23) * C(4) * S(5) * l2 * d5 + SS(23) * h2**2
           + 2 * SC(23) * C(4) * ly4 * h2 + 2 * SS(23) * C(5) * h2 * d5 + 2 * SC(23) * C(4) * S(5) * h2 * d5
           + CC(23) * ly4**2 + 2 * SC(23) * C(4) * C(5) * ly4 * d5 + 2 * CC(23) * S(5) * ly4 * d5
           + SS(23) * CC(4) * CC(5) * d5**2 + 2 * SC(23) * C(4) * SC(5) * d5**2 + CC(23) * SS(5) * d5**2
           + SS(23) * SS(4) * ly4**2 + 2 * SS(23) * SS(4) * S(5) * ly4 * d5 + SS(23) * SS(4) * d5**2)),
    ("h22: M4", (1, 1), ["M4"], M4 * (2 * C(3) * l2 * h1 + l2**2 - 2 * S(3) * C(4) * l2 * dy4)
     + M4 * (h1**2 + CC(4) * dy4**2)),
    ("h22: M5", (1, 1), ["M5"],
     M5 * (l2**2 + 2 * C(3) * l2 * h2 + 2 * C(3) * C(5) * l2 * d5 - 2 * S(3) * C(4) * l2 * ly4
           - 2 * S(3) * C(4) * S(5) * l2 * d5)
     + M5 * (h2**2 + 2 * C(5) * h2 * d5 + SS(4) * CC(5) * d5**2 + CC(4) * ly4**2 + 2 * CC(4) * S(5) * ly4 * d5
             + CC(4) * d5**2)),
    ("A33: M4", (2, 2), ["M4"], M4 * (h1**2 + CC(4) * dy4**2)),
    ("A33: I4", (2, 2), ["I_x4", "I_y4", "I_z4", "I_yz4"], CC(4) * Ix4 + SS(4) * Iy4),
    ("A33: M5", (2, 2), ["M5"],
     M5 * (h2**2 + 2 * C(5) * h2 * d5 + SS(4) * CC(5) * d5**2 + CC(4) * ly4**2 + 2 * CC(4) * S(5) * ly4 * d5
           + CC(4) * d5**2)),
    ("A33: I5", (2, 2), ["I_x5", "I_y5", "I_z5"], CC(4) * Ix5 + SS(4) * CC(5) * Iy5 + SS(4) * SS(5) * Iz5),
    ("A44: M4, I4", (3, 3), ["M4", "I_x4", "I_y4", "I_z4", "I_yz4"], M4 * dy4**2 + Iz4),
    ("A44: M5, I5", (3, 3), ["M5", "I_x5", "I_y5", "I_z5"],
     M5 * (ly4**2 + 2 * S(5) * ly4 * d5 + SS(5) * d5**2) + SS(5) * Iy5 + CC(5) * Iz5),
    ("A55", (4, 4), ["M5", "I_x5", "I_y5", "I_z5"], M5 * d5**2 + Ix5),
    ("A66", (5, 5), ["M5", "I_x5", "I_y5", "I_z5"], Iz5),
    ("A13: M4", (0, 2), ["M4"], M4 * (-C(23) * S(4) * dy4 * h1 + S(23) * SC(4) * dy4**2)),
    ("A13: I4", (0, 2), ["I_x4", "I_y4", "I_z4", "I_yz4"],
     S(23) * SC(4) * Ix4 - S(23) * SC(4) * Iy4 + C(23) * S(4) * Iyz4),
    ("A13: M5", (0, 2), ["M5"],
     M5 * (-C(23) * S(4) * ly4 * h2 - C(23) * S(4) * C(5) * ly4 * d5 - S(23) * SC(4) * CC(5) * d5**2
           - C(23) * S(4) * S(5) * h2 * d5 - C(23) * S(4) * SC(5) * d5**2 + S(23) * SC(4) * ly4**2
           + 2 * S(23) * SC(4) * S(5) * ly4 * d5 + S(23) * SC(4) * d5**2)),
    ("A13: I5", (0, 2), ["I_x5", "I_y5", "I_z5"],
     S(23) * SC(4) * Ix5 - S(23) * SC(4) * CC(5) * Iy5 - C(23) * S(4) * SC(5) * Iy5 - S(23) * SC(4) * SS(5) * Iz5
     + C(23) * S(4) * SC(5) * Iz5),
    ("A12 − A13: M4, M5", ((0, 1), (0, 2)), ["M4", "M5"],
     -M4 * C(2) * S(4) * l2 * dy4 + M5 * (-C(2) * S(4) * l2 * ly4 - C(2) * S(4) * S(5) * l2 * d5)),
]
# what the slide text says where the corrected version above differs: (group, printed, corrected)
MISREAD = [
    ("h11: I4", SS(23) * SS(4) * Ix4 + SS(23) * CC(4) * Iy4 - 2 * SC(23) * C(4) * Iy4 + CC(23) * Iz4,
     "I_yz4 (a product of inertia) printed as I_y4"),
    ("h11: M5", None, "CC(2+3) SS4 d5² printed for CC(2+3) SS5 d5²; CS5, C6, SU, T, d_y4 OCR'd for C5, C4, SC, 2, ℓ_y4"),
    ("h22: M5", None, "the M5 bracket is printed with a minus sign"),
    ("A33: M5", M5 * (h2**2 + 2 * C(5) * h2 * d5 + SS(4) * CC(5) * d5**2 + CC(4) * ly4**2 + 2 * C(3) * C(5) * ly4 * d5
                      + CC(6) * d2**2), "2 C3 C5 ℓ_y4 d5 for 2 CC4 S5 ℓ_y4 d5; CC6 d2² for CC4 d5²"),
    ("A44: M4, I4", M4 * dy4**2 + Ix4, "I_x4 for I_z4 (joint 4 rolls about z4)"),
    ("A13: I4", -S(23) * SC(4) * Ix4 - S(23) * SC(4) * Iy4 + C(23) * S(4) * Iy4,
     "−S(2+3) SC4 I_x4 for +; I_yz4 printed as I_y4"),
]
MISREAD[1] = ("h11: M5", CONFIRMED[3][3].subs(CC(23) * SS(5) * d5**2, CC(23) * SS(4) * d5**2), MISREAD[1][2])
MISREAD[2] = ("h22: M5", CONFIRMED[5][3] - 2 * M5 * (l2**2 + 2 * C(3) * l2 * h2 + 2 * C(3) * C(5) * l2 * d5
                                                          - 2 * S(3) * C(4) * l2 * ly4 - 2 * S(3) * C(4) * S(5) * l2 * d5),
              MISREAD[2][2])
# groups evaluated at q6 = 0 (the slides' hand terms carry no q6: they hold in the hand's home roll)
AT_Q6_ZERO = {"h11: I5", "A33: I5", "A44: M5, I5", "A55", "A13: I5"}


def _is_zero(expr) -> bool:
    """Exact zero test of a polynomial in sines and cosines of the joint angles: expand the angle
    sums, then cos² = 1 − sin² leaves the unique form A(sin) + cos·B(sin) of each angle."""
    e = sp.expand(sp.expand_trig(expr))
    e = sp.expand(e.subs({sp.cos(q[k]) ** 2: 1 - sp.sin(q[k]) ** 2 for k in range(1, 7)}))
    return e == 0


@pytest.fixture(scope="module")
def symbolic_M():
    model = ma23(symbolic=True)
    eom = derive(model)
    assert [str(s) for s in eom.q] == [f"q{k}" for k in range(1, 7)]
    return eom.M


def test_h11_h22_a33_of_links_1_to_3_symbolically(symbolic_M):
    """The legible slide text of links 1–3 (and body 6 on link 3) equals the derived M exactly."""
    wrist = {p[n]: 0 for n in INERTIAL if n[-1] in "45"}
    for (i, j), slide in (((0, 0), H11_LINKS_1_3), ((1, 1), H22_LINKS_1_3), ((2, 2), A33_LINKS_1_3)):
        assert _is_zero(symbolic_M[i, j].xreplace(wrist) - slide), (i, j)
    assert not _is_zero(symbolic_M[0, 0].xreplace(wrist) - H11_LINKS_1_3.xreplace({d3: 0}))  # the test can fail
    # the coupling terms of links 1–3 vanish, as the table's A12 and A13 have none
    assert _is_zero(symbolic_M[0, 1].xreplace(wrist)) and _is_zero(symbolic_M[0, 2].xreplace(wrist))


def _group_values(rng, keep):
    """Random lengths; the group's inertial parameters random, every other one zero."""
    values = {n: rng.uniform(-1.0, 1.0) for n in LENGTHS}
    values.update({n: 0.0 for n in INERTIAL})
    for n in keep:  # principal moments in [1.5, 2] and a small product: a rigid body's inertia
        values[n] = rng.uniform(-0.1, 0.1) if n == "I_yz4" else rng.uniform(1.5, 2.0)
    return values


def _crba_entry(values, qs, entry, q6_zero):
    model = ma23(**values)
    out = []
    for qq in qs:
        if q6_zero:
            qq = qq.copy()
            qq[5] = 0.0
        H = mb.crba(model, qq)
        out.append(H[entry[0]] - H[entry[1]] if isinstance(entry[0], tuple) else H[entry])
    return np.array(out)


def _slide_values(expr, values, qs, q6_zero):
    symbols = sorted(expr.free_symbols, key=str)
    f = sp.lambdify(symbols, expr, "numpy")
    out = []
    for qq in qs:
        env = dict(values)
        env.update({f"q{k + 1}": qq[k] for k in range(6)})
        if q6_zero:
            env["q6"] = 0.0
        out.append(f(*[env[str(s)] for s in symbols]))
    return np.array(out, dtype=float)


@pytest.mark.parametrize("name,entry,keep,slide", CONFIRMED, ids=[c[0] for c in CONFIRMED])
def test_wrist_and_coupling_terms_numerically(name, entry, keep, slide):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q6_zero = name in AT_Q6_ZERO
    for _ in range(3):
        values = _group_values(rng, keep)
        qs = rng.uniform(-np.pi, np.pi, size=(8, 6))
        got = _crba_entry(values, qs, entry, q6_zero)
        want = _slide_values(slide, values, qs, q6_zero)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name,printed,why", MISREAD, ids=[m[0] for m in MISREAD])
def test_printed_slide_text_disagrees_where_it_is_misread(name, printed, why):
    """The slide text as printed is wrong here (``why``); the corrected version above is right."""
    entry, keep = next((e, k) for n, e, k, _ in CONFIRMED if n == name)
    rng = np.random.default_rng(7)
    values = _group_values(rng, keep)
    qs = rng.uniform(-np.pi, np.pi, size=(8, 6))
    q6_zero = name in AT_Q6_ZERO
    got = _crba_entry(values, qs, entry, q6_zero)
    assert np.max(np.abs(got - _slide_values(printed, values, qs, q6_zero))) > 1e-3, why


def test_a66_is_iz5_and_hand_terms_need_q6_zero():
    """Joint 6 rolls the hand about its own axis: A66 = I_z5 at every q; A55 = M5 d5² + I_x5 only at
    q6 = 0 (the slides' hand terms carry no q6: with I_x5 ≠ I_y5 they hold in the home roll)."""
    model = ma23()
    info = seed_info(model)
    rng = np.random.default_rng(3)
    for _ in range(5):
        qq = rng.uniform(-np.pi, np.pi, 6)
        H = mb.crba(model, qq)
        assert abs(H[5, 5] - info.values["I_z5"]) < 1e-15
        c, s = np.cos(qq[5]), np.sin(qq[5])
        v = info.values
        assert abs(H[4, 4] - (v["M5"] * v["d5"] ** 2 + c * c * v["I_x5"] + s * s * v["I_y5"])) < 1e-14


def test_seed_constructor_conventions(symbolic_M):
    model = ma23()
    info = seed_info(model)
    assert info.name == "MA23" and info.coordinates == tuple(f"q{k}" for k in range(1, 7))
    assert info.actuators == tuple(f"T{k}" for k in range(1, 7))
    assert set(info.values) == set(LENGTHS + INERTIAL + ["g"])
    # positive definite at random states; gravity acts along −vertical (joint 1's axis)
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert np.linalg.eigvalsh(mb.crba(model, rng.uniform(-3, 3, 6))).min() > 0
    g = mb.rnea(model, np.zeros(6), np.zeros(6), np.zeros(6))
    assert abs(g[0]) < 1e-12            # turning about the vertical costs nothing
    # symbolic: all, some, or given expressions; parameters(model) gives their values
    half = ma23(symbolic=["l2", "d3"], l2=0.7)
    assert {str(s): v for s, v in parameters(half).items()} == {"l2": 0.7, "d3": 0.25}
    k = sp.Symbol("k", positive=True)
    assert derive(ma23(symbolic={"M2": 2 * k})).M.free_symbols >= {k}
    at = {**parameters(ma23(symbolic=True)), **{R(f"q{i}"): 0.1 * i for i in range(1, 7)}}
    H = np.array(symbolic_M.xreplace(at).evalf(), dtype=float)
    np.testing.assert_allclose(H, mb.crba(model, 0.1 * np.arange(1, 7)), rtol=0, atol=1e-12)


def test_bad_parameters_are_named():
    with pytest.raises(TypeError, match="ma23: parameter l2 must be a number"):
        ma23(l2="long")
    with pytest.raises(ValueError, match="ma23: parameter d5 must be finite"):
        ma23(d5=float("nan"))
    with pytest.raises(ValueError, match="unknown parameter"):
        ma23(symbolic=["L2"])
    with pytest.raises(TypeError):
        ma23(L2=1.0)


def test_in_the_command_line_table():
    from multibody.models.catalogue import build, catalogue

    assert "ma23" in catalogue()
    assert build("ma23").nv == 6
