"""A model says only what a mechanism can be: ModelBuilder refuses meaningless joints, limits, names
and mimics by name; one inertia check serves the builder (refuses) and files (warn, keep).
Quaternions with huge or tiny entries normalise without overflow, in Python and in the C core."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.model.inertia import check_inertia, inertia_fault


def two_links():
    b = mb.ModelBuilder("two")
    b.add_body("a", None, "revolute", axis=[0, 0, 1], inertia=[1, 1, 1], joint_name="ja")
    b.add_body("b", "a", "revolute", axis=[0, 1, 0], inertia=[1, 1, 1], joint_name="jb")
    return b


# ---- joints and their limits ---------------------------------------------------------------------
@pytest.mark.parametrize("damping", [np.nan, -0.1, np.inf])
def test_damping_must_be_finite_and_not_negative(damping):
    with pytest.raises(ValueError, match=r"^damping of 'a': expected a finite number ≥ 0"):
        mb.ModelBuilder().add_body("a", None, "Rz", damping=damping)


@pytest.mark.parametrize("friction", [np.nan, -1.0])
def test_friction_must_be_finite_and_not_negative(friction):
    with pytest.raises(ValueError, match=r"^friction of 'a': expected a finite number ≥ 0"):
        mb.ModelBuilder().add_body("a", None, "Rz", friction=friction)


def test_limits_must_be_numbers_with_lower_not_above_upper():
    b = mb.ModelBuilder()
    with pytest.raises(ValueError, match=r"^q_lower, q_upper: body 'a' has q_lower 1.0 > q_upper -1.0"):
        b.add_body("a", None, "Rz", q_lower=1.0, q_upper=-1.0)
    with pytest.raises(ValueError, match=r"^q_lower of 'a': expected a number, got nan"):
        b.add_body("a", None, "Rz", q_lower=np.nan)
    with pytest.raises(ValueError, match=r"^velocity_limit of 'a': expected a number ≥ 0"):
        b.add_body("a", None, "Rz", velocity_limit=-2.0)
    with pytest.raises(TypeError, match=r"^effort_limit of 'a': expected a real number, got str"):
        b.add_body("a", None, "Rz", effort_limit="10")
    b.add_body("a", None, "Rz", q_lower=-np.inf, q_upper=0.5, velocity_limit=np.inf, damping=0.0)
    m = b.build()
    assert (m.q_lower[0], m.q_upper[0], m.velocity_limit[0]) == (-np.inf, 0.5, np.inf)


def test_model_refuses_nan_damping_and_crossed_limits_too():
    m = two_links().build()
    with pytest.raises(ValueError, match=r"^damping: expected finite values ≥ 0"):
        mb.Model(**{**_fields(m), "damping": [0.0, np.nan]})
    with pytest.raises(ValueError, match=r"^q_lower, q_upper: position variable 1 has q_lower 2.0 > q_upper 1.0"):
        mb.Model(**{**_fields(m), "q_lower": [0.0, 2.0], "q_upper": [1.0, 1.0]})


def _fields(m):
    keys = ("parent", "jtype", "jaxis", "jpitch", "tree_rotation", "tree_translation", "mass", "com",
            "inertia_com", "body_names", "joint_names")
    return {k: getattr(m, k) for k in keys}


# ---- names -----------------------------------------------------------------------------------------
def test_duplicate_joint_names_are_refused():
    b = two_links()
    with pytest.raises(ValueError, match=r"^joint_name: body 'c': a joint named 'ja' already exists"):
        b.add_body("c", "b", "Rz", joint_name="ja")
    # the default joint name (body name + "_joint") may collide with an explicit one as well
    b.add_body("c", "b", "Rz", joint_name="d_joint")
    with pytest.raises(ValueError, match=r"^joint_name: body 'd': a joint named 'd_joint' already exists"):
        b.add_body("d", "c", "Rz")


def test_duplicate_frame_names_are_refused():
    b = two_links()
    b.add_frame("tool", "b", translation=[0, 0, 1])
    with pytest.raises(ValueError, match=r"^name: a frame named 'tool' already exists"):
        b.add_frame("tool", "a")
    with pytest.raises(TypeError, match=r"^name: expected a non-empty string, got int"):
        b.add_frame(3, "a")


# ---- mimics ----------------------------------------------------------------------------------------
def test_mimic_of_an_unknown_joint_is_refused_at_build():
    b = two_links()
    b.add_mimic("jb", "nope")
    with pytest.raises(ValueError, match=r"^mimic mimicked: no joint named 'nope'; joints are \['ja', 'jb'\]"):
        b.build()
    b = two_links()
    b.add_mimic(5, "ja")
    with pytest.raises(ValueError, match=r"^mimic joint: index 5 out of range 0…1"):
        b.build()


@pytest.mark.parametrize("bad", [dict(multiplier=np.nan), dict(multiplier=np.inf), dict(offset=-np.inf)])
def test_mimic_with_a_non_finite_multiplier_or_offset_is_refused(bad):
    key = next(iter(bad))
    with pytest.raises(ValueError, match=rf"^{key}: expected a finite number"):
        two_links().add_mimic("jb", "ja", **bad)


def test_mimic_cycles_and_self_mimics_are_refused():
    b = two_links()
    b.add_body("c", "b", "Rz", inertia=[1, 1, 1], joint_name="jc")
    b.add_mimic("jb", "ja")
    b.add_mimic("jc", "jb")
    b.add_mimic("ja", "jc")
    with pytest.raises(ValueError, match=r"^mimic: joints 'jb' → 'ja' → 'jc' → 'jb' mimic each other in a cycle"):
        b.build()
    b = two_links()
    b.add_mimic("ja", "ja")
    with pytest.raises(ValueError, match=r"^mimic: joint 'ja' cannot mimic itself"):
        b.build()
    b = two_links()
    b.add_mimic("jb", "ja", multiplier=2.0)
    b.add_mimic("jb", "ja", multiplier=3.0)
    with pytest.raises(ValueError, match=r"^mimic: joint 'jb' already mimics 'ja'"):
        b.build()
    # a chain that ends is fine
    b = two_links()
    b.add_mimic("jb", "ja", multiplier=-2.0, offset=0.1)
    (mm,) = b.build().mimics
    assert (mm.joint, mm.mimicked, mm.multiplier, mm.offset) == (1, 0, -2.0, 0.1)


def test_mimic_needs_one_variable_joints():
    b = mb.ModelBuilder()
    b.add_body("a", None, "spherical", inertia=[1, 1, 1])
    b.add_body("b", "a", "Rz", inertia=[1, 1, 1])
    b.add_mimic("b_joint", "a_joint")
    with pytest.raises(ValueError, match=r"^mimic: joint 'a_joint' has 3 velocity variables"):
        b.build()


# ---- one inertia check: the builder refuses, files warn -------------------------------------------
URDF = """<robot name="r"><link name="base"/>
<link name="arm"><inertial><mass value="1"/>
  <inertia ixx="{a}" ixy="{xy}" ixz="0" iyy="{b}" iyz="0" izz="{c}"/></inertial></link>
<joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>"""


@pytest.mark.parametrize("I, fault", [((1.0, 1.0, 3.0, 0.0), "violates the triangle inequality"),
                                      ((1.0, 1.0, 0.5, 2.0), "inertia is not positive definite")])
def test_one_inertia_check_builder_refuses_urdf_warns_and_keeps(I, fault):
    a, b, c, xy = I
    Ic = np.array([[a, xy, 0], [xy, b, 0], [0, 0, c]])
    with pytest.raises(ValueError, match=rf"^inertia: body 'arm' {fault}"):
        mb.ModelBuilder().add_body("arm", None, "Rz", inertia=Ic)
    with pytest.warns(mb.URDFWarning, match=rf"^inertia: link 'arm' \(line 3\) {fault}.*; kept as written"):
        m = mb.load_urdf(URDF.format(a=a, b=b, c=c, xy=xy))
    assert np.array_equal(m.inertia_com[0], Ic)
    # the kept model is a whole model: derived copies (which re-validate) work too
    assert m.with_gravity([0, 0, -1]).nb == 1
    # the check function is one, and exported for other readers (MJCF)
    assert fault in inertia_fault(Ic)
    with pytest.warns(UserWarning, match="kept as written"):
        check_inertia(Ic, "link 'x'", warning=UserWarning)


def test_a_physical_urdf_inertia_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mb.load_urdf(URDF.format(a=1.0, b=1.5, c=2.0, xy=0.1))


# ---- quaternions with huge or tiny entries ----------------------------------------------------------
SCALES = [1e200, 1e-200, 1e300, 1e-300, 1.0]


@pytest.mark.parametrize("s", SCALES)
def test_rq_normalises_huge_and_tiny_quaternions(s):
    q = np.array([1.0, 1.0, 0.0, 0.0])
    ref = mb.spatial.rq(q / np.sqrt(2))
    assert np.allclose(mb.spatial.rq(s * q), ref, atol=1e-15)
    assert not np.allclose(ref, np.eye(3))


def _free_body():
    b = mb.ModelBuilder("flyer")
    b.add_body("trunk", None, "free", inertia=[1.0, 2.0, 2.5], com=[0.1, 0.2, 0.3])
    b.add_body("ball", "trunk", "spherical", inertia=[0.1, 0.1, 0.1], joint_translation=[0, 0, 1], com=[0, 0, 0.5])
    return b.build()


@pytest.mark.parametrize("s", SCALES)
def test_free_and_spherical_joints_read_scaled_quaternions_in_c(s):
    m = _free_body()
    rng = np.random.default_rng(0)
    unit = np.array([1.0, 1.0, 0.0, 0.0]) / np.sqrt(2)
    q_ref = np.concatenate([[0.1, 0.2, 0.3], unit, unit[[0, 2, 1, 3]]])
    q = q_ref.copy()
    q[3:7] = s * np.array([1.0, 1.0, 0.0, 0.0])
    q[7:11] = s * np.array([1.0, 0.0, 1.0, 0.0])
    qd, qdd = rng.normal(size=m.nv), rng.normal(size=m.nv)
    np.testing.assert_allclose(mb.rnea(m, q, qd, qdd), mb.rnea(m, q_ref, qd, qdd), rtol=1e-13, atol=1e-13)
    for i in range(m.nb):
        X, X_ref = mb.forward_kinematics(m, q)[i], mb.forward_kinematics(m, q_ref)[i]
        np.testing.assert_allclose(X, X_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(mb.integrate(m, q, np.zeros(m.nv)), q_ref, atol=1e-15)


def test_builder_arguments_of_the_wrong_kind_are_type_errors():
    b = mb.ModelBuilder()
    with pytest.raises(TypeError, match=r"^joint: expected a joint name or code \(str\) or a JointType, got float"):
        b.add_body("a", None, 1.0)
    with pytest.raises(ValueError, match=r"^joint: unknown joint type 42"):
        b.add_body("a", None, 42)
    with pytest.raises(ValueError, match=r"^joint: unknown joint type 'hinge'"):
        b.add_body("a", None, "hinge")
    with pytest.raises(TypeError, match=r"^axis: expected an array of (real )?numbers, got"):
        b.add_body("a", None, "revolute", axis="z")
    with pytest.raises(ValueError, match=r"^axis: contains NaN or inf"):
        b.add_body("a", None, "revolute", axis=[0, 0, np.nan])
    with pytest.raises(TypeError, match=r"^armature: expected an array of (real )?numbers, got"):
        b.add_body("a", None, "Rz", armature="0.1")
    with pytest.raises(TypeError, match=r"^name: expected a non-empty string, got int"):
        b.add_body(3, None, "Rz")
    with pytest.raises(TypeError, match=r"^name: expected a non-empty string, got NoneType"):
        mb.ModelBuilder(None)
    with pytest.raises(TypeError, match=r"^mass: expected a real number, got str"):
        b.add_body("a", None, "Rz", mass="1")


def test_quaternion_rate_of_huge_or_tiny_quaternions_is_finite_or_refused():
    w = np.array([1.0, 2.0, 3.0])
    q = np.array([1.0, 1.0, 0.0, 0.0])
    # tiny: |q| ≈ 0, so the stabilisation gain is KSTAB·|w| and the rate is linear in q
    k = mb.spatial.KSTAB * np.linalg.norm(w)
    Omega = np.array([[k, -w[0], -w[1], -w[2]], [w[0], k, w[2], -w[1]],
                      [w[1], -w[2], k, w[0]], [w[2], w[1], -w[0], k]]) / 2
    for batch in (False, True):
        qq, ww = (q[None], w[None]) if batch else (q, w)
        np.testing.assert_allclose(mb.spatial.rqd(1e-200 * qq, ww).reshape(4) / 1e-200, Omega @ q, rtol=1e-14)
        # |q| = 1.4e150: |q|·|w| stays in range, and the rate is finite (|q| was computed as inf before)
        assert np.all(np.isfinite(mb.spatial.rqd(1e150 * qq, ww)))
        # 1e200: the true rate (~1e400) is beyond double range: said so, not inf/NaN
        with pytest.raises(ValueError, match=r"^rqd: the quaternion rate overflows"):
            mb.spatial.rqd(1e200 * qq, ww)
