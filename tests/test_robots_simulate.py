"""Every URDF that example-robot-data ships, simulated as a new user would: loaded, started mid-range
with a random velocity, run under its own limits, damping and friction with the defaults.

Under ``semi_implicit`` (damping implicit) every robot runs 0.2 s and stays within the limits
simulate enforces; under the default ``rk4`` a robot whose damping the 1 ms step cannot follow is
refused before the run with the message that names the joint and ``semi_implicit``, and every
other one runs.  A few files cannot run as written, each for a reason its error names (5 s in all).  Before
this test, 15 of these files chattered, blew up or ended in "fires forever" at a stop, and four
swung through stops whose lower and upper bounds are both URDF's default 0.
"""
import dataclasses
import glob
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from test_urdf_robots import robots_dir
from multibody.model.model import enforced_position_limits
from multibody.model.model import velocity_names

FILES = sorted(glob.glob(os.path.join(robots_dir(), "*", "**", "*.urdf"), recursive=True))

#: files that cannot run as written, and what their error must say
CANNOT = {
    "ur_description/urdf/ur3.urdf": "missing attribute 'name'",             # a xacro fragment
    "romeo_description/urdf/romeo.urdf": "singular joint-space inertia",      # massless thumb links
    "romeo_description/urdf/romeo_laas_small.urdf": "singular joint-space inertia",
}
#: files that may stop with an error naming the cause: iCub's neck links carry 1e-18 kg·m² (rk4
#: refuses their damping and says the neck moves as if massless; under semi_implicit a state may throw
#: the massless neck into a stop)
MAY_STOP = {"icub_description/robots/icub.urdf": "neck"}


def start(model, rng):
    """Each one-variable joint mid-range (where both bounds are finite), a random velocity."""
    q = model.neutral().copy()
    lower, upper = enforced_position_limits(model)
    for j in range(model.nb):
        i = int(model.q_start[j])
        if model.nq_joint[j] == 1 and np.isfinite(lower[i]) and np.isfinite(upper[i]):
            q[i] = 0.5 * (lower[i] + upper[i])
    return q, 0.5 * rng.normal(size=model.nv)


def within(model, traj):
    """Every one-variable joint within the limits simulate enforces, at every sample."""
    lower, upper = enforced_position_limits(model)
    for j in range(model.nb):
        i = int(model.q_start[j])
        if model.nq_joint[j] == 1:
            slack = 1e-9 * max(1.0, abs(lower[i]) if np.isfinite(lower[i]) else 1.0)
            if not (np.all(traj.q[:, i] >= lower[i] - slack) and np.all(traj.q[:, i] <= upper[i] + slack)):
                return False
    return True


@pytest.mark.parametrize("integrator", ["semi_implicit", "rk4"])
def test_every_example_robot_data_urdf_runs_within_its_limits_or_says_why(integrator):
    assert len(FILES) > 60
    rng = np.random.default_rng(0)
    ran, refused, stopped = [], [], []
    for path in FILES:
        name = os.path.relpath(path, robots_dir())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = mb.load_urdf(path)
            q0, qd0 = start(model, rng)
            traj = mb.simulate(model, q0, qd0, 0.2, integrator=integrator, on_divergence="raise")
        except ValueError as e:   # URDFError is one
            msg = str(e)
            if name in CANNOT or name in MAY_STOP:
                assert {**CANNOT, **MAY_STOP}[name] in msg, (name, msg)
                if name in MAY_STOP and integrator == "rk4":   # its neck's damping: the link without mass named
                    assert "as if nothing with mass moved with it" in msg, msg
                stopped.append(name)
            else:   # light joints, not massless ones
                assert integrator == "rk4" and msg.startswith("damping: ") and "integrator='semi_implicit'" in msg \
                    and "nothing with mass" not in msg, (name, msg)
                refused.append(name)
            continue
        assert name not in CANNOT, name
        assert traj.status == "finished" and np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.qd)), name
        assert within(model, traj), name
        ran.append(name)
    assert len(ran) + len(refused) + len(stopped) == len(FILES) and len(stopped) <= len(CANNOT) + len(MAY_STOP)
    if integrator == "semi_implicit":
        assert not refused
    else:   # the grippers and fingers of z1, xarm7, tiago, talos, allegro, hextilt, icub_reduced …
        assert 8 <= len(refused) <= 16 and "z1_description/urdf/z1.urdf" in refused


SUITE = sorted(glob.glob(os.path.join(os.path.dirname(__import__("dm_control").__file__), "suite", "*.xml")))


@pytest.mark.parametrize("integrator", ["semi_implicit", "rk4"])
def test_every_dm_control_suite_model_runs_within_its_limits_or_is_refused_for_its_damping(integrator):
    """The same for dm_control's suite (MJCF through MuJoCo's compiler), on hard stops (an MJCF file's default is
    MuJoCo's soft limits: the next test).  Under rk4 the dog is refused
    although no joint alone is too stiff (c (M⁻¹)_jj dt ≤ 2.0): its damped shoulder and scapula joints
    together decay a velocity mode at 3.8 / dt, past RK4's 2.785 — before the coupled rate was
    checked, it blew up to 466 rad/s in 6 ms and stopped in 'fires forever'."""
    assert len(SUITE) > 15
    rng = np.random.default_rng(1)
    refused = []
    for path in SUITE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mb.load_mjcf(path, unsupported="warn")
            q0, qd0 = start(model, rng)
            try:
                # semi_implicit at the file's own step (the default, as MuJoCo steps it), rk4 at 1 ms
                traj = mb.simulate(model, q0, qd0, 0.2, dt=None if integrator == "semi_implicit" else 1e-3,
                                   integrator=integrator, on_divergence="raise", limits="hard",
                                   contact="off")   # random states sink geoms deep into the floor
            except ValueError as e:
                assert integrator == "rk4" and str(e).startswith("damping: "), (path, str(e))
                refused.append(os.path.basename(path))
                continue
        assert traj.status == "finished" and within(model, traj), path
    assert refused == ([] if integrator == "semi_implicit" else ["dog.xml", "manipulator.xml", "stacker.xml"])


def test_every_dm_control_suite_model_runs_its_file_as_mujoco_does():
    """Each suite file under its own defaults — its integrator and step, its floor and geoms, its limits soft as
    MuJoCo's (solreflimit, solimplimit): 1 s from its qpos0 with no event to locate (before, the dog's hard stops
    took 141 events and 10 s of computing for 3 s), finished.  The dog and both humanoids fall and lie: their
    roots 3 s on within 15 mm of MuJoCo's (its constraints are soft, our contact is not theirs; measured: the
    dog 6.5 mm, the humanoid 0.4 mm, the CMU humanoid 12 mm)."""
    import mujoco
    for path in SUITE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mb.load_mjcf(path, unsupported="warn")
        tr = mb.simulate(model, None, None, 1.0, record_every=1000)
        assert tr.status == "finished" and tr.events == [] and "limits hard" not in tr.passive, path
        if os.path.basename(path) in ("dog.xml", "humanoid.xml", "humanoid_CMU.xml"):
            tr = mb.simulate(model, None, None, 3.0, record_every=1000)
            mj = mujoco.MjModel.from_xml_path(path)
            d = mujoco.MjData(mj)
            for _ in range(round(3.0 / mj.opt.timestep)):
                mujoco.mj_step(mj, d)
            assert abs(tr.q[-1, 2] - d.qpos[2]) < 0.015, (path, tr.q[-1, 2], d.qpos[2])


@pytest.mark.parametrize("integrator", ["rk4", None])
@pytest.mark.parametrize("name, t_final", [("talos_data/robots/talos_left_arm.urdf", 0.02),
                                           ("simple_humanoid_description/urdf/simple_humanoid.urdf", 0.01)])
def test_a_robot_whose_joints_start_on_their_stops_lands_on_the_ground_under_the_defaults(name, t_final, integrator):
    """Floating, on the ground, 1 ms RK4 on the compliant law (the defaults until the default on a floor
    became semi_implicit, which the second parameter runs: it lands in a step or two), from the neutral state,
    where Talos' arm_left_4_joint and simple_humanoid's LARM_SHOULDER_R sit on a stop.  Both ended in
    "fires forever".  Talos' joint, let go on its stop (g = 0) with q̈ = 2e-6 rad/s² away, was pressed
    back 2e-11 s later as the feet met the floor; locating that return from g = 0 drew the bracket
    to t0 + 1e-12 (locate_crossing took a point still off the stop as crossed), 50 impacts in 1e-16 s.
    The shoulder, let go likewise, dipped 1e-10 rad into its stop inside a step whose end found it
    out again, and another joint's event cut the step there, where its impact, not yet armed, could
    not see it (EventMonitor.earliest now watches a guard let go exactly on its wall from the step's start)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(os.path.join(robots_dir(), name), floating=True, check_meshes=False)
    traj = mb.simulate(model, None, None, t_final, ground=True, integrator=integrator)
    assert traj.integrator == (integrator or "semi_implicit")
    assert traj.status == "finished" and traj.t[-1] == pytest.approx(t_final)
    assert len(traj.events) > 5 or integrator is None         # (RK4's many stages meet the stops again and again)
    assert within(model, traj) and np.all(np.isfinite(traj.q))


def test_a_run_thrown_off_by_a_joint_without_inertia_names_the_joint():
    """icub's head is a point mass on neck_yaw's axis (its inertia 0 in the URDF): on a floor under the
    default (semi_implicit) an ankle's impact at t ≈ 0.58 s, solved through that joint, threw the robot
    from 133 J to 13 kJ, and the message blamed "a step too large" (a smaller dt does not help).  It
    names the joint and the remedy; with an armature there the run finishes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(os.path.join(robots_dir(), "icub_description/robots/icub.urdf"), floating=True)
    with pytest.warns(mb.SimulationWarning, match="gained energy"):
        traj = mb.simulate(model, None, None, 0.6, ground=True, record_every=10)
    assert traj.status == "diverged"
    assert "joint 'neck_yaw' has almost no inertia" in traj.message and "armature" in traj.message
    assert "step too large" not in traj.message
    armature = np.zeros(model.nv)
    armature[velocity_names(model).index("neck_yaw")] = 1e-4
    fixed = mb.simulate(dataclasses.replace(model, armature=armature), None, None, 0.6, ground=True, record_every=10)
    assert fixed.status == "finished"


@pytest.mark.slow
def test_a_failed_solve_through_a_joint_without_inertia_names_the_joint():
    """icub on a floor, 1.4 s under the default (semi_implicit at 1 ms), recorded every 50 steps, which misses
    the impact that throws it (t ≈ 0.58 s, above): at t ≈ 1.34 s the implicit contact's solve failed, "the
    contact terms outweigh the bodies' inertia by some 13 orders" (the head's, on neck_yaw, is 2e-19 of the
    heaviest joint's), where the step factored M + h JᵀGJ dense; on the tree's sparse factor it goes through,
    and a hard ankle stop's event then fires forever.  Whichever way the run ends, raised or "diverged", the
    message names that joint."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(os.path.join(robots_dir(), "icub_description/robots/icub.urdf"), floating=True)
        try:
            traj = mb.simulate(model, None, None, 1.4, ground=True, record_every=50)
            message = traj.message
            assert traj.status == "diverged"
        except ValueError as e:
            message = str(e)
            assert "cannot be solved to working precision" in message or "fires forever" in message
    assert "joint 'neck_yaw' has almost no inertia" in message and "armature" in message


def test_the_solve_failures_that_name_a_joint_without_inertia_are_the_solves():
    """rollout.SOLVE_FAILURES, the status codes whose message names a joint without inertia, are
    csrc/common/status.h's singular inertia, hard contact's LCP and the implicit contact's solve."""
    from multibody.core import _core
    from multibody.simulation.rollout import SOLVE_FAILURES
    messages = [_core.status_message(code) for code in SOLVE_FAILURES]
    assert messages[0].startswith("model: singular joint-space inertia")
    assert messages[1].startswith("contact='hard': the contact LCP")
    assert messages[2].startswith("compliant contact: the step's implicit contact system")
