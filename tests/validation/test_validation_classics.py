"""Rigid-body classics with closed forms or published numbers, and the suite's command."""
import subprocess
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from multibody.validation.__main__ import main, table
from multibody.validation.problems import TOP_INERTIA, TOP_OMEGA0, euler_top, euler_top_reference, run, whipple


def test_euler_top_closed_form_solves_eulers_equations():
    """The reference itself against Euler's equations integrated by SciPy (independent of the closed form)."""
    I = np.array(TOP_INERTIA)
    t = np.linspace(0, 30, 301)
    sol = solve_ivp(lambda _, w: np.cross(I * w, w) / I, (0, 30), TOP_OMEGA0, method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=t)
    np.testing.assert_allclose(euler_top_reference(t)[0], sol.y.T, atol=1e-9)


def test_euler_top_flip_interval_and_trajectory():
    row = euler_top(quick=True)
    assert row.level == "high" and row.error < 1e-8


def test_whipple_speeds_meet_meijaard_to_1e_10():
    row = whipple()
    assert row.error < 1e-10


def test_run_names_an_unknown_problem():
    with pytest.raises(ValueError, match="unknown problem"):
        run(["A99"])


def test_table_lists_every_row_with_its_source(tmp_path):
    rows = run(["top", "whipple"], quick=True)
    page = table(rows)
    assert page.count("| **high** |") == 2 and "Landau & Lifshitz" in page and "Meijaard" in page


def test_the_command_writes_the_table_and_checks(tmp_path):
    out = tmp_path / "validation.md"
    assert main(["--only", "top", "whipple", "--quick", "--out", str(out), "--check"]) == 0
    assert "Torque-free" in out.read_text()


@pytest.mark.slow
def test_the_command_check_passes_on_every_problem(tmp_path):
    """The CI command itself (all problems, full durations) in a subprocess: exit status 0."""
    out = tmp_path / "validation.md"
    r = subprocess.run([sys.executable, "-m", "multibody.validation", "--check", "--out", str(out)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    assert out.read_text().count("| **high** |") + out.read_text().count("| **low** |") >= 5


def test_heavy_top_steady_precession():
    from multibody.validation.problems import heavy_top
    row = heavy_top(quick=True)
    assert row.level == "high" and row.error < 1e-8


def test_heavy_top_precession_rate_satisfies_its_condition_and_refuses_a_slow_spin():
    from multibody.validation.problems import HEAVY_TOP, heavy_top_precession
    p = HEAVY_TOP
    Om = heavy_top_precession(**p)
    I1 = p["Ic1"] + p["m"] * p["l"] ** 2
    assert p["m"] * p["g"] * p["l"] == pytest.approx(Om * (p["I3"] * p["w3"] - I1 * Om * np.cos(p["theta"])), rel=1e-13)
    with pytest.raises(ValueError, match="too slow"):
        heavy_top_precession(**{**p, "w3": 0.1})


def test_kepler_orbit_against_keplers_equation():
    from multibody.validation.problems import kepler
    row = kepler(quick=True)
    assert row.level == "high" and row.error < 1e-9


def test_kepler_reference_solves_the_two_body_equation():
    """Kepler's-equation positions against SciPy's DOP853 on r̈ = −μ r/|r|³ (the reference's own check)."""
    from multibody.validation.problems import kepler_reference
    t = np.linspace(0, 2 * np.pi, 50)
    sol = solve_ivp(lambda _, y: np.r_[y[2:], -y[:2] / np.linalg.norm(y[:2]) ** 3], (0, t[-1]), [0.5, 0, 0, np.sqrt(3)],
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    np.testing.assert_allclose(kepler_reference(t), sol.y[:2].T, atol=1e-9)
    with pytest.raises(ValueError, match="eccentricity"):
        kepler_reference(t, e=1.0)
