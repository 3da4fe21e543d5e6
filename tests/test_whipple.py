"""The Whipple bicycle against Meijaard, Papadopoulos, Ruina and Schwab (2007), Proc. R. Soc. A 463:1955.

The published numbers: M, C1, K0, K2 (the paper's eq. 5.4 / appendix), the weave and capsize speeds
and the eigenvalues at v = 0, 1, …, 10 m/s (its Table 2), as printed — 14 digits after the point."""
import numpy as np
import pytest

import multibody as mb
from multibody.dynamics.constraints import ConstraintSet, constraint_terms
from multibody.models import bicycle
from multibody.models.bicycle import (BENCHMARK, BicycleParameters, whipple_bicycle, whipple_eigenvalues,
                                      whipple_linear, whipple_speeds, whipple_state)

PAPER = {
    "M": [[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]],
    "C1": [[0.0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]],
    "K0": [[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]],
    "K2": [[0.0, 76.59734589573222], [0.0, 2.65431523794604]],
}
WEAVE, CAPSIZE = 4.29238253634111, 6.02426201538837
# Table 2: at v = 0 … 10 m/s, the real eigenvalue that becomes the capsize mode, the weave pair,
# and the castering mode (at v = 0: the two pairs ±3.1316…, ±5.5309…)
TABLE2_CAPSIZE = [-3.13164324790656, -3.13423125066578, -3.07158645641514, -2.63366137253667,
                  -1.42944427361326, -0.32286642900409, -0.00406690076970, 0.10268170574766,
                  0.14327879765713, 0.15790184030917, 0.16105338653172]
TABLE2_WEAVE = [None, 3.52696170990070 + 0.8077402751993j, 2.68234517512745 + 1.68066296590675j,
                1.70675605663975 + 2.31582447384325j, 0.41325331521125 + 3.07910818603206j,
                -0.77534188219585 + 4.46486771378823j, -1.52644486584142 + 5.87673060598709j,
                -2.13875644258362 + 7.19525913329805j, -2.69348683581097 + 8.46037971396931j,
                -3.21675402252485 + 9.69377351531791j, -3.72016840437287 + 10.90681139476287j]
TABLE2_CASTER = [None, -7.11008014637442, -8.67387984831735, -10.35101467245920, -12.15861426576450,
                 -14.07838969279820, -16.08537123098030, -18.15788466125262, -20.27940894394569,
                 -22.43788559040858, -24.62459635017404]


@pytest.fixture(scope="module")
def bike():
    return whipple_bicycle()


@pytest.fixture(scope="module")
def matrices(bike):
    return whipple_linear(bike)


def test_the_complex_step_runs_through_the_kernels_own_numbers(bike):
    """The NumPy statement the complex step runs through equals the compiled kernels (poses,
    angular velocities, mb.rnea) and the library's constraint terms on random states."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, 8))
        s = mb.body_states(bike, q, qd, qdd)
        tree = bicycle._ComplexTree(bike, q, qd, qdd)
        np.testing.assert_allclose(tree.R, s.R, atol=1e-14)
        np.testing.assert_allclose(tree.p, s.p, atol=1e-14)
        np.testing.assert_allclose(tree.w, np.einsum("bij,bj->bi", s.R, s.v[:, :3]), atol=1e-13)
        np.testing.assert_allclose(tree.inverse_dynamics(bike.gravity), mb.rnea(bike, q, qd, qdd), atol=1e-11)
        still = bicycle._ComplexTree(bike, q, qd, np.zeros(8))
        for con in bike.constraints:
            mine, theirs = still.rolling(con), constraint_terms(con, bike, q, qd)
            for k in ("c", "cdot", "J", "bias"):
                np.testing.assert_allclose(getattr(mine, k), getattr(theirs, k), atol=1e-12)


def test_reduced_equations_agree_with_the_constrained_dynamics(bike):
    """The reduced equations the linearisation differentiates (Kane's, on the independent speeds)
    give the same accelerations as ConstraintSet.accelerations (TMT eq. 6, the compiled KKT solve)
    at leaning, steered, moving states."""
    cs = ConstraintSet(*bike.constraints)
    ind, _ = bicycle._indices(bike)
    for roll, steer, rr, sr, v in ((0.1, 0.05, 0.3, -0.2, 4.0), (-0.3, 0.4, -1.0, 0.5, 2.0)):
        q, qd = whipple_state(bike, roll, steer, rr, sr, v)
        qdd, _ = cs.accelerations(bike, q, qd, np.zeros(8))
        u = qd[ind]
        f0 = bicycle._reduced(bike, roll, steer, u, np.zeros(3), bike.gravity)
        Mr = np.column_stack([bicycle._reduced(bike, roll, steer, u, e, bike.gravity) - f0 for e in np.eye(3)])
        np.testing.assert_allclose(np.linalg.solve(Mr, -f0), qdd[ind], rtol=1e-9, atol=1e-9)


def test_matrices_equal_the_papers(matrices):
    for name, ours in zip(("M", "C1", "K0", "K2"), matrices):
        np.testing.assert_allclose(ours, PAPER[name], atol=1e-12, rtol=0, err_msg=name)
    M = matrices[0]
    assert M[0, 1] == pytest.approx(M[1, 0], abs=1e-14)          # M symmetric, as it must be


def test_weave_and_capsize_speeds(matrices):
    vw, vc = whipple_speeds((*matrices, BENCHMARK.g))
    assert abs(vw - WEAVE) < 1e-10 and abs(vc - CAPSIZE) < 1e-10
    # at the weave speed the weave pair is ±3.43503384866144 i (Table 2a)
    e = whipple_eigenvalues(vw, (*matrices, BENCHMARK.g))[0]
    assert np.abs(e.imag).max() == pytest.approx(3.43503384866144, abs=1e-10)


def test_eigenvalues_over_speed_equal_table2(matrices):
    mats = (*matrices, BENCHMARK.g)
    ev = whipple_eigenvalues(np.arange(11.0), mats)
    np.testing.assert_allclose(sorted(ev[0].real), [-5.53094371765393, -3.13164324790656, 3.13164324790656,
                                                    5.53094371765393], atol=1e-12)
    for v in range(1, 11):
        e = ev[v]
        pair = e[e.imag > 0][0]
        real = np.sort(e[np.abs(e.imag) == 0].real)
        assert abs(pair - TABLE2_WEAVE[v]) < 1e-12, v
        np.testing.assert_allclose(real, sorted([TABLE2_CAPSIZE[v], TABLE2_CASTER[v]]), atol=1e-12, err_msg=str(v))


def test_linearize_in_minimal_coordinates_agrees(bike, matrices):
    """mb.linearize on the model's constraints (finite differences of the KKT dynamics, minimal
    states: 7 positions, 3 speeds) has the exact matrices' eigenvalues, and zeros for the
    ignorable coordinates and the forward speed."""
    for v in (0.0, 3.0, 4.6):
        q, qd = whipple_state(bike, speed=v)
        lin = mb.linearize(bike, q, qd)
        assert lin.A.shape == (10, 10)
        e = np.linalg.eigvals(lin.A)
        ours = np.sort_complex(e[np.abs(e) > 1e-3])
        np.testing.assert_allclose(ours, np.sort_complex(whipple_eigenvalues(v, (*matrices, BENCHMARK.g))[0]),
                                   atol=1e-6)


def test_state_is_on_the_constraints_and_bad_input(bike):
    q, qd = whipple_state(bike, roll=0.3, steer=-0.4, roll_rate=1.0, steer_rate=0.5, speed=5.0)
    c, cdot = ConstraintSet(*bike.constraints).residual(bike, q, qd)
    assert np.abs(c).max() < 1e-14 and np.abs(cdot).max() < 1e-12
    assert q[4] != 0.0                              # the rear frame pitches to keep the front wheel down
    with pytest.raises(TypeError, match="params: expected a BicycleParameters"):
        whipple_bicycle({"w": 1.0})
    with pytest.raises(ValueError, match="params.r_R"):
        whipple_bicycle(BicycleParameters(r_R=-0.3))
    with pytest.raises(ValueError, match="params.m_B"):
        whipple_bicycle(BicycleParameters(m_B=float("nan")))
    with pytest.raises(ValueError, match="whipple_bicycle model"):
        whipple_linear(mb.models.planar(2))
    with pytest.raises(ValueError, match="expected finite numbers"):
        whipple_state(bike, roll=float("nan"))


def test_other_parameters_change_the_matrices():
    """A heavier front frame moves M and the speeds: the matrices come from the model, not a table."""
    M, *_ = whipple_linear(BicycleParameters(m_H=8.0))
    assert abs(M[1, 1] - PAPER["M"][1][1]) > 1e-3


def _run(bike, v, t_final):
    q0, qd0 = whipple_state(bike, roll_rate=0.5, speed=v)
    fell = mb.Event(lambda t, q, qd: 1.0 - abs(q[3]), direction=-1, terminal=True, name="fell")
    return mb.simulate(bike, q0, qd0, t_final, dt=2e-3, events=[fell])


@pytest.mark.slow
def test_nonlinear_runs_self_stable_at_4_6_falls_at_3(bike):
    """Kicked in roll (0.5 rad/s): at 4.6 m/s (inside 4.29…6.02) the bicycle rights itself, at 3 m/s
    (weave unstable, +1.71 1/s) it falls; the rolling constraints' drift measured."""
    stable = _run(bike, 4.6, 8.0)
    roll = stable.q[:, 3]
    assert np.abs(roll[stable.t <= 2]).max() > 0.04
    assert np.abs(roll[stable.t >= 7]).max() < 0.25 * np.abs(roll[stable.t <= 2]).max()
    assert stable.t[-1] == pytest.approx(8.0)
    r = stable.constraint_residual
    assert np.abs(r[:, 0]).max() < 1e-9 and np.abs(r[:, 1]).max() < 1e-7
    falls = _run(bike, 3.0, 8.0)
    assert falls.t[-1] < 6.0 and abs(falls.q[-1, 3]) == pytest.approx(1.0, abs=1e-6)


def test_speeds_bracket_without_a_crossing_is_named(matrices):
    with pytest.raises(ValueError, match="weave mode does not become stable between 7.0 and 10.0"):
        whipple_speeds((*matrices, BENCHMARK.g), bracket=(7.0, 10.0))
    with pytest.raises(ValueError, match="bracket: expected speeds"):
        whipple_speeds((*matrices, BENCHMARK.g), bracket=(5.0, 1.0))
