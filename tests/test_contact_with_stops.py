"""The compliant scene's law implicit in a semi_implicit step while joints rest on their hard stops
(scene_contact.c's mb_scene_contact_implicit with the held joints: the correction solved on the free
joints' block of M), and linearised over the run's dt in the partial steps that locate an event."""
import os
import warnings

import numpy as np
import pytest

import multibody as mb
from reference_steppers import python_loop
from test_loop_contact import NumpyScene

# a box on a floor with a flap hinged at its edge: the flap falls onto its stop (3°) as the box lands,
# and rests on it while the floor carries the box
FLAP = ('<mujoco><worldbody><geom type="plane" size="2 2 .1"/>'
        '<body pos="0 0 0.3" euler="0 0 0.3"><freejoint/><geom type="box" size="0.2 0.1 0.05" mass="2"/>'
        '<body pos="0.2 0 0"><joint name="flap" type="hinge" axis="0 1 0" range="-30 3" limited="true"/>'
        '<geom type="box" pos="0.1 0 0" size="0.1 0.08 0.02" mass="0.5"/></body></body></worldbody></mujoco>')


def test_resting_stop_under_the_implicit_law_matches_its_python_statement():
    """The compiled loop against the Python loop (SceneContact.implicit_step with the resting joints
    held) and against the NumPy statement of the whole law: the same events at the same times, the
    same trajectory to 1e-10; at the end the flap rests exactly on its stop and the floor carries m g."""
    model = mb.load_mjcf(FLAP)
    qd0 = np.array([0.5, -0.3, 0, 0.2, 0.4, -1.0, 0.0])
    kw = dict(dt=0.005, integrator="semi_implicit", limits="hard")
    fast = mb.simulate(model, model.q_default, qd0, 1.0, **kw)
    with python_loop():
        slow = mb.simulate(model, model.q_default, qd0, 1.0, **kw)
        ref = mb.simulate(model, model.q_default, qd0, 1.0, contact=NumpyScene(model), **kw)
    names = [e.name for e in fast.events]
    assert "flap upper limit" in names and "flap upper limit release" in names
    for other in (slow, ref):
        assert [e.name for e in other.events] == names
        assert np.abs(np.array([e.t for e in other.events]) - [e.t for e in fast.events]).max() <= 1e-10
        assert np.abs(other.q - fast.q).max() <= 1e-10
    assert np.abs(slow.contact_forces - fast.contact_forces).max() <= 1e-7
    assert fast.q[-1, 7] == np.deg2rad(3.0)                   # held exactly on its stop
    resting = fast.t > fast.events[-1].t
    assert np.all(fast.q[resting, 7] == np.deg2rad(3.0))
    assert fast.contact_forces[-1, :, 2].sum() == pytest.approx(2.5 * 9.81, rel=1e-6)


def test_humanoid_on_its_hard_stops_at_its_own_step():
    """dm_control's humanoid as the file runs it (semi_implicit at its 5 ms, compliant contact, the
    hard stops): with joints resting on stops the contact used to fall back to the explicit
    law, which 5 ms cannot hold — 254 kN at 0.37 s and the body thrown 100 m.  It now falls and lies."""
    import dm_control
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(os.path.join(os.path.dirname(dm_control.__file__), "suite", "humanoid.xml"))
    tr = mb.simulate(model, None, None, 2.0, limits="hard")
    assert tr.status == "finished" and tr.integrator == "semi_implicit"
    assert len(tr.events) > 0                                  # stops were hit (and rested on)
    assert np.abs(tr.contact_forces[..., 2]).max() < 20e3      # MuJoCo's largest at landing ~5 kN
    assert 0.1 < tr.q[-1, 2] < 0.5                             # lying on the floor (MuJoCo: 0.26 m at rest)
    E = np.asarray(tr.total_energy)
    assert E.max() <= E[0] + 1e-6                              # nothing pumped energy in


def test_a_resting_stop_takes_the_implicit_laws_load_as_the_step_does(monkeypatch):
    """A stop's force λ is what holds its joint in the step that is taken.  Under semi_implicit the
    scene's law is implicit in the step, and its correction loads the held joints too: λ = λ_FD +
    (M Δq̈)_j − (Jᵀ Δf)_j (scene_contact.c's held_force, SceneContact.implicit_step's held_share).  On
    the flap pressed onto its stop by the floor that load is up to ~100 N·m.  The compiled step's λ
    (which the run's releases are decided on) equals the Python statement's, and wherever a stop's
    force is not zero its sign says what its joint let go would do (push ⇔ a move into the stop): the
    complementarity the resting set is solved on.  On the forward dynamics' λ alone it said "push,
    4–8 N·m" where the step let the flap go — on tiago_pro's fingertips, pressed into their stops by the
    floor, the two sides chased each other into an impact that "fired forever"."""
    from multibody.simulation.system import System
    stop_forces, seen = System.stop_forces, []

    def recorded(self, t, q, v):
        lam = stop_forces(self, t, q, v)
        limits, step_forces, contact_step = self.limits, self.limits.step_forces, self.contact_step
        try:
            limits.step_forces = None                          # the Python statement
            self.__dict__.pop("_stop_forces_memo", None)       # (each solved: not the other's, kept for
            statement = stop_forces(self, t, q, v)             # this state)
            self.contact_step = None                           # the forward dynamics' λ alone
            self.__dict__.pop("_stop_forces_memo", None)
            explicit = stop_forces(self, t, q, v)
        finally:
            limits.step_forces, self.contact_step = step_forces, contact_step
            self.__dict__.pop("_stop_forces_memo", None)
        for k, (vi, stop) in enumerate(list(limits.resting.items())):
            away = stop[4] * limits.released_acceleration(vi, t, q, v)
            seen.append((stop[4] * lam[k], stop[4] * statement[k], stop[4] * explicit[k], away))
        return lam
    monkeypatch.setattr(System, "stop_forces", recorded)
    model = mb.load_mjcf(FLAP)
    qd0 = np.array([0.5, -0.3, 0, 0.2, 0.4, -1.0, 0.0])
    tr = mb.simulate(model, model.q_default, qd0, 1.0, dt=0.005, integrator="semi_implicit", limits="hard")
    assert tr.status == "finished"
    push, statement, explicit, away = np.array(seen).T
    assert len(push) > 20
    assert np.abs(push - statement).max() <= 1e-9 * np.abs(push).max()
    assert np.abs(push - explicit).max() > 50.0                # the floor's load on the stop
    loaded = np.abs(push) > 1e-3                               # (the flap's weight: ~0.5 N·m)
    assert loaded.sum() > 5 and np.all((push[loaded] > 0) == (away[loaded] < 0))
    assert not np.all((explicit[loaded] > 0) == (away[loaded] < 0))


@pytest.mark.slow
def test_tiago_pro_on_the_floor_under_semi_implicit():
    """example-robot-data's tiago_pro on a floor under semi_implicit (what its damping's refusal at
    rk4 recommends): its gripper fingertips fall onto the floor while resting on their stops.  It
    ended "event 'gripper_left_fingertip_left_joint upper limit' fires forever" at t = 0.2488 s; it
    runs, within its limits."""
    from test_robots_simulate import within
    from test_urdf_robots import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(os.path.join(robots_dir(), "tiago_pro_description", "robots", "tiago_pro.urdf"),
                             floating=True, check_meshes=False)
    tr = mb.simulate(model, None, None, 0.4, ground=True, integrator="semi_implicit", record_every=10)
    assert tr.status == "finished" and within(model, tr)
    assert any(e.name.startswith("gripper_left_fingertip_left_joint") for e in tr.events)


def test_a_resting_set_with_no_consistent_choice_steps_on():
    """A resting set with no set that satisfies every stop's condition (alex_psyonic_hands' right pinky once met
    it: its two joints pressed by the floor through the implicit contact, whose solve changes with the joints
    held): the pivoting visits sets in a cycle.  It held the last one tried, whose released stop its own guard
    let go again at once: "fires forever".  The cycle's most-held set is held for a step, and the run goes on.
    Here two stops whose conditions contradict each other: both held, A pulls (and, let go, would leave);
    B alone held, A's joint, free, drives into its stop."""
    from multibody.simulation.limits import JointLimits
    model = mb.load_mjcf('<mujoco><worldbody><body><joint name="a" range="-1 1"/><geom size=".1" mass="1"/>'
                         '<body pos="0 0 -0.3"><joint name="b" range="-1 1"/><geom size=".1" mass="1"/></body>'
                         '</body></worldbody></mujoco>')
    lim = JointLimits(model, "hard")
    A, B = (next(s for s in lim.stops if s[0] == name and s[4] > 0) for name in ("a", "b"))

    class System:
        def stop_forces(self, t, q, v):
            return np.array([-1.0, 1.0]) if len(lim.resting) == 2 else np.array([1.0])
    lim.system = System()
    lim._held_acceleration = lambda t, q, v: np.array([-1.0, 0.0])     # A free: into its lower stop
    lim.released_acceleration = lambda vi, t, q, v: 1.0                 # A let go: away from it
    q = np.array([A[3], B[3]])
    resting = lim.settle(0.25, q, np.zeros(2), candidates=(A, B))
    assert set(resting) == {A[2], B[2]} and lim._cycle_hold == (0.25, frozenset({A[2], B[2]}))


@pytest.mark.slow
def test_alex_pressing_its_fingers_on_the_floor_steps_through_its_stops():
    """alex_psyonic_hands on a floor under semi_implicit with hard stops: its fingers pressed by the floor through
    the implicit contact rest on and leave their stops; the run finishes, within its limits.  (It once met a
    resting set with no consistent choice, above, where the contacts' small Woodbury system applied its row
    interchanges out of order: scene_contact.c's small_lu.)"""
    from test_robots_simulate import within
    from test_urdf_robots import robots_dir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(os.path.join(robots_dir(), "alex_description", "urdf", "alex_psyonic_hands.urdf"),
                             floating=True)
    tr = mb.simulate(model, None, None, 0.85, ground=True, integrator="semi_implicit", limits="hard",
                     record_every=50)
    assert tr.status == "finished" and within(model, tr)
    assert tr.t[-1] == pytest.approx(0.85)
