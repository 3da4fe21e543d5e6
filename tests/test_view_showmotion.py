"""showmotion files: size, contents read back, default animation, bad input, atomic writes, videos."""
import os
import re
from types import SimpleNamespace

import numpy as np
import pytest

import multibody as mb
from multibody.view import default_motion, export_video, load_animation, showmotion
from multibody.model.appearance import default_appearance, load_mesh


def test_thirty_body_robot_ten_seconds_at_1khz_is_under_5_mb(tmp_path):
    model = mb.models.auto_tree(30, bf=2, skew=0.5)
    t = np.arange(10_001) * 1e-3
    rng = np.random.default_rng(0)
    q = np.cumsum(rng.normal(scale=1e-2, size=(len(t), model.nq)), axis=0)
    path = showmotion(model, (t, q), out=tmp_path / "big.html")
    size = os.path.getsize(path)
    assert size < 5e6, size
    anim = load_animation(path)
    assert np.array_equal(anim.t, t)
    assert np.array_equal(anim.q, q.astype(np.float32).astype(float))   # stored as float32
    print(f"30 bodies, 10 001 samples: {size / 1e6:.2f} MB")


def test_default_animation_ramps_each_joint_in_turn():
    model = mb.models.planar(3)
    t, q = default_motion(model, samples_per_second=10)
    assert t[-1] == 3.0 and len(t) == 31
    for k in range(3):
        i = int(np.flatnonzero(np.isclose(t, k + 0.5))[0])
        assert q[i].tolist() == [1.0 if j == k else 0.0 for j in range(3)]
    # quaternions stay unit when multi-DoF joints are ramped
    fb = mb.models.vee()
    t, q = default_motion(fb)
    assert t[-1] == fb.nv
    assert np.allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0)


def test_page_round_trip_model_geometry_camera_and_metadata(tmp_path):
    model = mb.models.gfx_example(tracking=True)
    path = showmotion(model, out=tmp_path / "gfx.html", title="gfx <b>", author="A. Author",
                      description="all </script> instructions")
    text = open(path, encoding="utf-8").read()
    assert "<script src" not in text and "http://" not in text and "https://" not in text   # plays offline
    assert "<title>gfx &lt;b&gt;</title>" in text
    anim = load_animation(path)
    assert anim.title == "gfx <b>" and anim.author == "A. Author" and anim.description == "all </script> instructions"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", anim.date)
    m = anim.model
    for k in ("parent", "jtype", "jaxis", "tree_rotation", "tree_translation", "mass", "com", "inertia_com", "gravity"):
        assert np.array_equal(getattr(m, k), getattr(model, k)), k
    assert [g.kind for g in m.geometries] == [g.kind for g in model.geometries]
    assert m.camera.body == 1 and m.camera.track_point == (1.35, 0.0, 0.0)
    # re-export with new metadata (spatial_v2's showmotion('about', meta))
    again = load_animation(showmotion(anim, out=tmp_path / "again.html", title="renamed"))
    assert again.title == "renamed" and again.author == "A. Author"
    assert np.array_equal(again.q, anim.q)


def test_trajectory_forms_and_plots_stored(tmp_path):
    model = mb.models.double_pendulum()
    t = np.linspace(0, 1, 50)
    q = np.column_stack([np.sin(t), np.cos(t)])
    qd = np.column_stack([np.cos(t), -np.sin(t)])
    a = load_animation(showmotion(model, (t, q.T), out=tmp_path / "a.html"))           # spatial_v2 nq × n
    assert np.allclose(a.q, q, atol=1e-6) and set(a.plots) == {"states"}
    b = load_animation(showmotion(model, SimpleNamespace(t=t, q=q, qd=qd), out=tmp_path / "b.html"))
    e = mb.energy(model, q, qd)
    assert set(b.plots) == {"energy", "states", "velocities"}
    assert np.allclose(b.plots["energy"]["kinetic"], e.KE, rtol=1e-6)
    assert np.allclose(b.plots["energy"]["total"], np.asarray(e.KE) + np.asarray(e.PE), rtol=1e-6)


def test_bad_input_gives_clear_errors_and_no_file(tmp_path):
    model = mb.models.double_pendulum()
    out = tmp_path / "x.html"
    with pytest.raises(ValueError, match=r"does not fit the model: q has shape \(5, 3\)"):
        showmotion(model, (np.arange(5.0), np.zeros((5, 3))), out=out)
    with pytest.raises(ValueError, match="non-decreasing"):
        showmotion(model, (np.array([0.0, 1.0, 0.5]), np.zeros((3, 2))), out=out)
    with pytest.raises(ValueError, match="NaN"):
        showmotion(model, (np.arange(3.0), np.full((3, 2), np.nan)), out=out)
    with pytest.raises(ValueError, match="does not exist"):
        showmotion(model, out=tmp_path / "missing" / "x.html")
    with pytest.raises(ValueError, match="is a folder"):
        showmotion(model, out=tmp_path)
    with pytest.raises(TypeError, match="trajectory"):
        showmotion(model, "traj.npz", out=out)
    with pytest.raises(TypeError, match="multibody.Model"):
        showmotion("double_pendulum", out=out)
    assert os.listdir(tmp_path) == []           # nothing half-written, no temporary left


def test_load_animation_rejects_other_and_truncated_files(tmp_path):
    good = showmotion(mb.models.planar(2), out=tmp_path / "p.html")
    data = open(good, "rb").read()
    cut = tmp_path / "cut.html"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        load_animation(cut)
    cut.write_bytes(data[: len(data) // 20])
    with pytest.raises(ValueError, match="no showmotion data"):
        load_animation(cut)
    other = tmp_path / "o.html"
    other.write_text("<html>hello</html>")
    with pytest.raises(ValueError, match="no showmotion data"):
        load_animation(other)
    damaged = tmp_path / "d.html"
    damaged.write_bytes(data.replace(b'"motion":{"t":"', b'"motion":{"t":"!!'))
    with pytest.raises(ValueError, match="damaged"):
        load_animation(damaged)
    with pytest.raises(ValueError, match="cannot read"):
        load_animation(tmp_path / "nope.html")


def test_viewer_joint_codes_match_the_kernels():
    """The viewer's joint constants are generated from the joint table (one entry per JointType
    code, in code order) and the page's script holds no joint code of its own."""
    import json
    from importlib import resources
    from multibody.model.joints import JOINTS
    from multibody.view.animation import _viewer_js
    raw = resources.files("multibody.view").joinpath("viewer.js").read_text()
    assert "/*{{JOINT_POSE}}*/" in raw and not re.search(r"\b(REVOLUTE|SPHERICAL|FREE|PLANAR)\b", raw)
    m = re.search(r"const JOINT_POSE = (\[.*?\]);", _viewer_js())
    table = json.loads(m.group(1))
    assert len(table) == len(mb.JointType) == len(JOINTS)
    assert table == [[list(step) for step in JOINTS[int(t)].pose] for t in mb.JointType]


def test_urdf_meshes_are_embedded_to_16_bit_precision(tmp_path):
    from test_urdf_robots import ROBOTS
    model = mb.load_urdf(os.path.join(ROBOTS, "ur_description", "urdf", "ur5_robot.urdf"))
    anim = load_animation(showmotion(model, out=tmp_path / "ur5.html"))
    visual = [g for g in model.geometries if g.role == "visual"]
    back = anim.model.geometries
    assert len(back) == len(visual) and all(g.kind == "solid" for g in back)
    V, F = load_mesh(visual[1].mesh, visual[1].scale)
    span = V.max(axis=0) - V.min(axis=0)
    assert np.abs(back[1].vertices - V).max() <= span.max() / 65535
    assert np.array_equal(np.array(back[1].faces), F)


def test_default_appearance_draws_links_between_joints_and_a_small_centre_of_mass():
    """Links from each joint to its children's joints (a last link to twice its CoM), a sphere at
    each CoM, and nothing larger than the arm: proNEu's RA3Link (Θ = 1 kg m² on 1 kg bodies) was
    drawn as 2.4 m inertia boxes on 1 m links."""
    for model in (mb.models.ra3link(), mb.models.auto_tree(5, taper=0.8)):
        shapes = default_appearance(model)
        L = 1.0 if model.name == "RA3Link" else max(np.linalg.norm(model.tree_translation, axis=1))
        assert not [g for g in shapes if g.kind == "box"]
        for i in range(model.nb):
            mine = [g for g in shapes if g.body == i]
            com = [g for g in mine if g.kind == "sphere" and g.name.startswith("centre of mass")]
            assert len(com) == 1 and np.allclose(com[0].translation, model.com[i])
            links = [g for g in mine if g.kind == "capsule"]
            children = [c for c in range(model.nb) if model.parent[c] == i]
            want = [model.tree_translation[c] for c in children] or [2 * model.com[i]]
            # a capsule is stored by its midpoint, its axis (rotation's third column) and its length
            segments = [(np.asarray(g.translation) - np.asarray(g.rotation)[:, 2] * g.size[1] / 2,
                         np.asarray(g.translation) + np.asarray(g.rotation)[:, 2] * g.size[1] / 2) for g in links]
            for w in want:
                assert any(np.allclose(a, 0, atol=1e-12) and np.allclose(b, w, atol=1e-12) for a, b in segments), \
                    (model.name, i)
            for g in mine:
                assert max(g.size) <= 1.2 * L, (model.name, g.name, g.size)


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_export_video(tmp_path, suffix):
    model = mb.models.planar(2)
    path = export_video(model, out=tmp_path / f"p{suffix}", fps=5, size=(200, 150))
    data = open(path, "rb").read()
    if suffix == ".gif":
        from PIL import Image
        im = Image.open(path)
        assert data[:6] == b"GIF89a" and im.n_frames == 11        # 2 s at 5 fps, both ends
    else:
        assert data[4:8] == b"ftyp" and len(data) > 2000
    with pytest.raises(ValueError, match=r"\.mp4 or \.gif"):
        export_video(model, out=tmp_path / "p.avi")


def test_every_built_in_model_draws(tmp_path):
    from multibody.cli import load_model
    from multibody.models.catalogue import catalogue
    from multibody.model.appearance import appearance_of
    for name in catalogue():
        model = load_model(name)
        shapes = appearance_of(model)
        assert shapes, name
        anim = load_animation(showmotion(model, out=tmp_path / f"{name}.html"))
        assert len(anim.model.geometries) == len([g for g in shapes if g.kind != "mesh"]), name


def test_report_pendulum_boxes_have_the_models_inertia():
    model = mb.models.double_pendulum()
    boxes = [g for g in model.geometries if g.kind == "box"]
    assert len(boxes) == 2
    for g in boxes:
        a, b, c = g.size
        m = model.mass[g.body]
        assert np.allclose(m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]), model.inertia_com[g.body])
        assert np.allclose(g.translation, model.com[g.body])


def test_mechanisms_draw_their_tree_and_symbolic_models_are_refused(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    flyer = mb.models.flapping_flyer()
    anim = load_animation(showmotion(flyer, out=tmp_path / "flyer.html"))
    assert anim.model.nq == flyer.model.nq
    assert mb.view.plot_bodies(flyer).name == "3d"
    with pytest.raises(ValueError, match="symbolic"):
        showmotion(mb.models.double_pendulum(symbolic=True), out=tmp_path / "s.html")
    with pytest.raises(ValueError, match="symbolic"):
        mb.view.plot_bodies(mb.models.double_pendulum(symbolic=True))


def test_names_holding_markup_stay_data_in_the_page(tmp_path):
    """Every text the page embeds is escaped: no ``<`` inside the data element (``<!--<script>`` there
    made browsers swallow the closing tag), placeholders in names are not expanded, and the page
    reads back with the names as written."""
    title = "arm <!--<script> </script> {{JS}} {{DATA}} & é"
    b = mb.ModelBuilder(name=title)
    b.add_body("<!--<script>", None, "Rz", mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.1)
    model = b.build()
    path = showmotion(model, out=tmp_path / "hostile.html", author="</script><!--")
    text = open(path, encoding="utf-8").read()
    data = re.search(r'<script type="application/json" id="sm-data">(.*?)</script>', text, re.S).group(1)
    assert "<" not in data and ">" not in data and "&" not in data
    assert text.count('id="sm-data"') == 1
    import html
    assert f"<title>{html.escape(title)}</title>" in text      # as text; {{JS}} in it is not the viewer
    anim = load_animation(path)
    assert anim.meta["title"] == title and anim.meta["author"] == "</script><!--"


def test_bodies_whose_meshes_cannot_be_read_get_the_default_look_and_one_warning(tmp_path):
    """`animate <ur5.urdf>` without pycollada printed a warning per mesh and drew floating axes only."""
    import json
    import warnings
    doc = """<robot name="arm"><link name="base"/>
<link name="l1"><inertial><origin xyz="0 0 0.25"/><mass value="1"/>
  <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><geometry><mesh filename="missing1.dae"/></geometry></visual></link>
<link name="l2"><inertial><origin xyz="0 0 0.25"/><mass value="1"/>
  <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  <visual><geometry><mesh filename="bad.stl"/></geometry></visual></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/></joint>
<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.5"/></joint></robot>"""
    (tmp_path / "bad.stl").write_text("not a mesh")
    (tmp_path / "arm.urdf").write_text(doc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_urdf(str(tmp_path / "arm.urdf"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        page = showmotion(model, out=tmp_path / "arm.html")
    lines = [str(w.message) for w in caught if "showmotion" in str(w.message)]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "the meshes of 2 bodies could not be read" in lines[0] and "drawn with the default look" in lines[0]
    text = open(page, encoding="utf-8").read()
    data = json.loads(re.search(r'id="sm-data">(.*?)</script>', text, re.S).group(1))
    assert {s["body"] for s in data["shapes"]} >= {0, 1}        # both links drawn, not just axes
