"""Structure of plot_bodies and the trajectory plots: axes, frame colours, line counts and the data drawn."""
import matplotlib

matplotlib.use("Agg")

from types import SimpleNamespace  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

import multibody as mb  # noqa: E402
from multibody.view import compare, plot_bodies, plot_energy, plot_paths, plot_phase, plot_states  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def lines_by_gid(ax):
    return {ln.get_gid(): ln for ln in ax.lines}


@pytest.mark.parametrize("make", [mb.models.double_pendulum, lambda: mb.models.auto_tree(6, bf=2, skew=0.7),
                                  mb.models.vee, mb.models.gfx_example])
def test_plot_bodies_frames_links_and_com(make):
    model = make()
    rng = np.random.default_rng(3)
    q = mb.integrate(model, model.neutral(), rng.normal(size=model.nv))
    ax = plot_bodies(model, q, names=True)
    R, p = mb.forward_kinematics(model, q)
    L = lines_by_gid(ax)
    # world frame + one frame per body, x/y/z in red/green/blue, each axis from the body origin along R's columns
    for k, c in enumerate("xyz"):
        assert to_rgba(L[f"world-frame-{c}"].get_color()) == to_rgba(("red", "green", "blue")[k])
        for i in range(model.nb):
            ln = L[f"frame-{i}-{c}"]
            assert to_rgba(ln.get_color()) == to_rgba(("red", "green", "blue")[k])
            x, y, z = ln.get_data_3d()
            start, end = np.array([x[0], y[0], z[0]]), np.array([x[1], y[1], z[1]])
            assert np.allclose(start, p[i], atol=1e-12)
            d = (end - start) / np.linalg.norm(end - start)
            assert np.allclose(d, R[i][:, k], atol=1e-12)
    frame_lines = [g for g in L if g.startswith("frame-")]
    assert len(frame_lines) == 3 * model.nb
    # one link per body: parent origin → joint origin → body origin
    for i in range(model.nb):
        x, y, z = L[f"link-{i}"].get_data_3d()
        assert np.allclose([x[-1], y[-1], z[-1]], p[i], atol=1e-12)
        par = model.parent[i]
        start = np.zeros(3) if par < 0 else p[par]
        assert np.allclose([x[0], y[0], z[0]], start, atol=1e-12)
    # CoM markers where the bodies' centres of mass are
    heavy = np.flatnonzero(model.mass > 0)
    com = [c for c in ax.collections if c.get_gid() == "com"][0]
    xs, ys, zs = com._offsets3d
    expect = p[heavy] + np.einsum("nij,nj->ni", R[heavy], model.com[heavy])
    assert np.allclose(np.column_stack([xs, ys, zs]), expect, atol=1e-12)
    assert any(c.get_gid() == "geometry" for c in ax.collections)
    assert len(ax.texts) == model.nb + 1     # body names and the world label
    assert ax.name == "3d"


def test_plot_bodies_draws_urdf_meshes_and_rejects_bad_q():
    from test_urdf_robots import ROBOTS
    import os
    model = mb.load_urdf(os.path.join(ROBOTS, "ur_description", "urdf", "ur5_robot.urdf"))
    ax = plot_bodies(model, model.neutral(), max_mesh_faces=500)
    coll = [c for c in ax.collections if c.get_gid() == "geometry"][0]
    assert len(coll.get_facecolor()) > 1000     # one colour per triangle of the meshes
    with pytest.raises(ValueError, match=r"q: expected shape \(6,\)"):
        plot_bodies(model, np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        plot_bodies(model, np.full(6, np.nan))
    fig = plt.figure()
    with pytest.raises(ValueError, match="3-D Axes"):
        plot_bodies(model, ax=fig.add_subplot())


def pendulum_run(n=201):
    """The double pendulum moved along an arbitrary smooth path, with the kernels' energies."""
    model = mb.models.double_pendulum()
    t = np.linspace(0, 2, n)
    q = np.column_stack([np.pi / 4 * np.cos(2 * t), -np.pi / 4 + 0.3 * np.sin(3 * t)])
    qd = np.column_stack([-np.pi / 2 * np.sin(2 * t), 0.9 * np.cos(3 * t)])
    e = mb.energy(model, q, qd)
    return model, SimpleNamespace(t=t, q=q, qd=qd, kinetic_energy=np.asarray(e.KE), potential_energy=np.asarray(e.PE),
                                  total_energy=None)


def test_plot_states_and_phase_draw_the_data():
    model, run = pendulum_run()
    fig = plot_states(run, model)
    assert len(fig.axes) == 2 and [len(a.lines) for a in fig.axes] == [2, 2]
    assert [ln.get_label() for ln in fig.axes[0].lines] == ["th1", "th2"]
    assert np.array_equal(fig.axes[1].lines[1].get_ydata(), run.qd[:, 1])
    assert fig.axes[1].get_xlabel() == "t [s]"
    fig = plot_phase(run, model)
    assert len(fig.axes) == 2
    for k, ax in enumerate(fig.axes):
        assert np.array_equal(ax.lines[0].get_xdata(), run.q[:, k])
        assert np.array_equal(ax.lines[0].get_ydata(), run.qd[:, k])
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("th1 [rad]", "th1 velocity [rad/s]")


def test_plot_energy_total_and_drift():
    model, run = pendulum_run()
    fig = plot_energy(run)
    top, bottom = fig.axes
    assert [ln.get_label() for ln in top.lines] == ["kinetic", "potential", "total"]
    total = run.kinetic_energy + run.potential_energy
    assert np.allclose(top.lines[2].get_ydata(), total)
    assert np.allclose(bottom.lines[0].get_ydata(), total - total[0])
    assert f"{np.abs(total - total[0]).max():.3e}" in bottom.get_title()
    # energies computed from the model when the run has none
    bare = SimpleNamespace(t=run.t, q=run.q, qd=run.qd)
    fig2 = plot_energy(bare, model)
    assert np.allclose(fig2.axes[0].lines[2].get_ydata(), total)
    with pytest.raises(ValueError, match="pass model="):
        plot_energy(bare)


def test_plot_paths_follow_the_centre_of_mass_and_points():
    model, run = pendulum_run()
    fig = plot_paths(run, model, points=[("link2", [0, 1, 0])])
    ax2d = fig.axes[0]          # the pendulum swings in the y–z plane: drawn in 2-D, true to scale
    assert ax2d.name == "rectilinear" and (ax2d.get_xlabel(), ax2d.get_ylabel()) == ("y [m]", "z [m]")
    com = mb.center_of_mass(model, run.q)
    assert np.allclose(np.column_stack(ax2d.lines[0].get_data()), com[:, 1:])
    tip = mb.point_position(model, run.q, 1, [0, 1, 0])
    assert np.allclose(np.column_stack(ax2d.lines[1].get_data()), tip[:, 1:])
    assert len(fig.axes[1].lines) == 4          # y and z of both curves against time
    assert fig._suptitle.get_text() == f"{model.name}: paths"
    # a motion in 3-D keeps the 3-D axes
    arm = mb.models.ra3link()
    t = np.linspace(0, 1, 30)
    spatial = SimpleNamespace(t=t, q=np.column_stack([t, 0.5 * t, -t]))
    fig3 = plot_paths(spatial, arm)
    x, y, z = fig3.axes[0].lines[0].get_data_3d()
    assert np.allclose(np.column_stack([x, y, z]), mb.center_of_mass(arm, spatial.q))
    with pytest.raises(ValueError, match="nq = 2"):
        plot_paths(SimpleNamespace(t=run.t, q=run.q[:, :1]), model)


def test_compare_overlays_two_runs_and_their_difference():
    model, a = pendulum_run(201)
    _, b = pendulum_run(101)                     # another time grid
    b.q = b.q + 0.01
    fig = compare(a, b, labels=("RK45", "Euler"), model=model)
    assert len(fig.axes) == 3
    assert [ln.get_label() for ln in fig.axes[0].lines] == ["RK45", "Euler"]
    diff = fig.axes[2].lines[0].get_ydata()
    assert np.allclose(diff, a.q[:, 0] - np.interp(a.t, b.t, b.q[:, 0]))
    fig = compare(a, b, which="qd")
    assert np.array_equal(fig.axes[0].lines[0].get_ydata(), a.qd[:, 0])
    with pytest.raises(ValueError, match="which"):
        compare(a, b, which="tau")
    with pytest.raises(ValueError, match="coordinates"):
        compare(a, SimpleNamespace(t=a.t, q=a.q[:, :1]))


def test_plots_reject_what_is_not_a_trajectory():
    with pytest.raises(TypeError, match="attribute 't'"):
        plot_states(object())
    with pytest.raises(ValueError, match=r"trajectory.q: expected shape \(3, n\)"):
        plot_states(SimpleNamespace(t=np.arange(3.0), q=np.zeros((4, 2))))


def test_many_joints_get_a_grid_and_legends_beside_the_curves():
    """Twelve joints: phase portraits in a grid (not a 12-panel strip), legends outside the axes,
    titles that name the model."""
    model = mb.models.auto_tree(12)
    t = np.linspace(0, 1, 40)
    run = SimpleNamespace(t=t, q=np.outer(t, np.ones(12)), qd=np.ones((40, 12)))
    fig = plot_phase(run, model)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 12
    width, height = fig.get_size_inches()
    assert width / height < 2          # 3 rows of 4, not one row of 12
    states = plot_states(run, model)
    for ax in states.axes:
        legend = ax.get_legend()
        box = legend.get_window_extent(states.canvas.get_renderer())
        assert box.x0 >= ax.get_window_extent().x1 - 1      # right of the curves, not over them
    assert states._suptitle.get_text().startswith(model.name)


# --- a reader's view: units, names, styles and nothing drawn over anything else -------------------

import os  # noqa: E402

ARTIFACTS = os.environ.get("MULTIBODY_ARTIFACTS") or os.path.join(os.path.dirname(__file__), "artifacts")


def save_artifact(fig, name):
    """The picture a test judged, kept under tests/artifacts/plots/ to be looked at by eye."""
    from multibody.view._io import save_figure
    os.makedirs(os.path.join(ARTIFACTS, "plots"), exist_ok=True)
    save_figure(fig, os.path.join(ARTIFACTS, "plots", name + ".png"), dpi=90)


def solo_floating():
    """solo12 on a free joint: 19 position and 18 velocity variables."""
    from test_urdf_robots import ROBOTS
    return mb.load_urdf(os.path.join(ROBOTS, "solo_description", "robots", "solo12.urdf"), floating=True,
                        check_meshes=False)


def short_run(model, t_final=0.3, seed=1):
    """A real simulated run (the Trajectory keeps its model)."""
    rng = np.random.default_rng(seed)
    q0 = mb.integrate(model, model.neutral(), 0.3 * rng.normal(size=model.nv))
    return mb.simulate(model, q0, 0.5 * rng.normal(size=model.nv), t_final, dt=1e-3, record_every=10)


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def overlap(a, b, tol=0.5):
    """Whether two display boxes overlap by more than ``tol`` pixels each way."""
    return a.x0 + tol < b.x1 and b.x0 + tol < a.x1 and a.y0 + tol < b.y1 and b.y0 + tol < a.y1


def test_units_follow_each_joint_type():
    """All revolute: the axes say rad and rad/s, not "rad or m"; lines named after the joints."""
    model = mb.models.double_pendulum()
    fig = plot_states(short_run(model))                  # no model=: the Trajectory's own is used
    save_artifact(fig, "states_double_pendulum")
    assert [ax.get_ylabel() for ax in fig.axes] == ["position [rad]", "velocity [rad/s]"]
    assert [legend_texts(ax) for ax in fig.axes] == [["th1", "th2"], ["th1", "th2"]]
    # revolute and prismatic mixed: the axis says so and each entry carries its unit
    model = mb.models.ra3link_prismatic()
    run = short_run(model)
    fig = plot_states(run, model)
    save_artifact(fig, "states_ra3link_prismatic")
    assert all("units in legend" in ax.get_ylabel() for ax in fig.axes)
    assert legend_texts(fig.axes[0]) == ["q1 [rad]", "q2 [rad]", "x [m]"]
    assert legend_texts(fig.axes[1]) == ["q1 [rad/s]", "q2 [rad/s]", "x [m/s]"]
    fig.canvas.draw()
    for ax in fig.axes:                  # the two-line label fits beside its panel
        assert ax.yaxis.label.get_window_extent().height <= ax.get_window_extent().height
    fig = plot_phase(run)
    save_artifact(fig, "phase_ra3link_prismatic")
    assert [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes] == [
        ("q1 [rad]", "q1 velocity [rad/s]"), ("q2 [rad]", "q2 velocity [rad/s]"), ("x [m]", "x velocity [m/s]")]
    fig = compare(run, run, model=model)
    save_artifact(fig, "compare_ra3link_prismatic")
    assert [ax.get_ylabel() for ax in fig.axes[:3]] == ["q1 [rad]", "q2 [rad]", "x [m]"]
    assert legend_texts(fig.axes[3]) == ["q1 [rad]", "q2 [rad]", "x [m]"]


def test_floating_base_coordinates_are_named_with_components_and_units():
    """A free joint's seven positions and six velocities: joint name plus component, each with its unit."""
    model = solo_floating()
    fig = plot_states(short_run(model), model)
    save_artifact(fig, "states_solo12_floating")
    pos, vel = (legend_texts(ax) for ax in fig.axes)
    assert pos[:8] == ["root_joint x [m]", "root_joint y [m]", "root_joint z [m]", "root_joint qw [unitless]",
                       "root_joint qx [unitless]", "root_joint qy [unitless]", "root_joint qz [unitless]",
                       "FL_HAA [rad]"]
    assert vel[:7] == ["root_joint ωx [rad/s]", "root_joint ωy [rad/s]", "root_joint ωz [rad/s]",
                       "root_joint vx [m/s]", "root_joint vy [m/s]", "root_joint vz [m/s]", "FL_HAA [rad/s]"]
    assert len(pos) == 19 and len(vel) == 18 and pos[-1] == "HR_KFE [rad]"
    # StarlETH's base is six one-dof joints among 22 bodies (4 feet fixed): still one name per coordinate
    star = mb.models.starleth()
    fig = plot_states(short_run(star), star)
    save_artifact(fig, "states_starleth")
    names = legend_texts(fig.axes[0])
    assert names[:4] == ["qX [m]", "qY [m]", "qZ [m]", "qAL [rad]"] and len(names) == 18
    assert not any(n.startswith("q1") or n.startswith("q18") for n in names)


@pytest.mark.parametrize("make", [mb.models.starleth, solo_floating])
def test_many_lines_each_have_their_own_colour_and_line_style(make):
    model = make()
    fig = plot_states(short_run(model), model)
    for ax in fig.axes:
        styles = {(to_rgba(ln.get_color()), str(ln.get_linestyle())) for ln in ax.lines}
        assert len(ax.lines) >= 18 and len(styles) == len(ax.lines)
        # and the legend shows the same style as its line
        for handle, line in zip(ax.get_legend().legend_handles, ax.lines):
            assert (to_rgba(handle.get_color()), handle.get_linestyle()) == (to_rgba(line.get_color()),
                                                                              line.get_linestyle())


def all_figures():
    for make in (mb.models.double_pendulum, mb.models.ra3link, mb.models.ra3link_prismatic, mb.models.starleth,
                 solo_floating):
        model = make()
        run = short_run(model, t_final=1.0)
        yield f"{model.name}_states", plot_states(run, model)
        yield f"{model.name}_energy", plot_energy(run, model)
        yield f"{model.name}_paths", plot_paths(run, model, points=[(model.body_names[-1], [0, 0, 0])])
        if model.nq == model.nv:
            yield f"{model.name}_phase", plot_phase(run, model)
            yield f"{model.name}_compare", compare(run, run, model=model)


def test_legends_cover_no_curves_and_stay_in_the_figure():
    """ra3link's energy legend sat on the total; no legend of any plot may lie over any panel's data
    area, nor the title (compare's on StarlETH sat on the first panel)."""
    for name, fig in all_figures():
        save_artifact(fig, name)
        fig.canvas.draw()
        fbox = fig.bbox
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert legends or name.endswith("_phase"), name      # phase portraits have none
        for leg in legends:
            box = leg.get_window_extent()
            for ax in fig.axes:
                if ax.get_visible():
                    assert not overlap(box, ax.get_window_extent()), (name, [t.get_text() for t in leg.get_texts()])
            assert fbox.x0 - 1 <= box.x0 and box.x1 <= fbox.x1 + 1 and fbox.y0 - 1 <= box.y0 and box.y1 <= fbox.y1 + 1
        for ax in fig.axes:                               # tick labels stand apart (phase: −0.100−0.075…)
            if ax.get_visible() and ax.name != "3d":
                for axis in (ax.xaxis, ax.yaxis):
                    boxes = [t.get_window_extent() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
                    assert not any(overlap(boxes[i], boxes[j], tol=-1.0) for i in range(len(boxes))
                                   for j in range(i)), (name, ax.get_xlabel(), axis.axis_name)
        title = fig._suptitle.get_window_extent()        # the title sits on no panel either
        assert not any(overlap(title, ax.get_window_extent()) for ax in fig.axes if ax.get_visible()), name
        plt.close(fig)


def check_3d_ticks(ax, where):
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        boxes = [t.get_window_extent() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
        assert len(boxes) >= 2, where
        for i in range(len(boxes)):
            for j in range(i):
                assert not overlap(boxes[i], boxes[j], tol=0.0), (where, axis.axis_name, i, j)
        label = axis.label.get_window_extent()
        assert not any(overlap(label, b) for b in boxes), (where, axis.axis_name, "axis label on the ticks")


def test_3d_tick_labels_do_not_run_together():
    arm = mb.models.ra3link()
    fig = plot_paths(short_run(arm, t_final=1.0), arm)
    save_artifact(fig, "paths_3d_ra3link")
    fig.canvas.draw()
    check_3d_ticks(fig.axes[0], "plot_paths")
    for model in (mb.models.ra3link(), solo_floating()):
        ax = plot_bodies(model, short_run(model, 0.05).q[-1])
        ax.figure.canvas.draw()
        check_3d_ticks(ax, model.name)


def drawn_text_boxes(ax, monkeypatch):
    """Display boxes of the Axes' texts (body names, "world") as drawn, by name: a 3-D text's box
    is only right while it is drawn."""
    import matplotlib.text
    boxes = {}
    draw = matplotlib.text.Text.draw

    def recording(self, renderer):
        draw(self, renderer)
        if self in ax.texts:
            boxes[self.get_text().strip()] = self.get_window_extent(renderer)
    monkeypatch.setattr(matplotlib.text.Text, "draw", recording)
    ax.figure.canvas.draw()
    monkeypatch.undo()
    return boxes


@pytest.mark.parametrize("make", [mb.models.starleth, solo_floating, mb.models.double_pendulum])
def test_plot_bodies_labels_do_not_sit_on_each_other(make, monkeypatch):
    """StarlETH's six base bodies share one origin: their names were printed on top of each other."""
    model = make()
    q = short_run(model, 0.05).q[-1]
    ax = plot_bodies(model, q, names=True)
    save_artifact(ax.figure, f"bodies_{model.name}")
    boxes = drawn_text_boxes(ax, monkeypatch)
    assert sorted(boxes) == sorted(list(model.body_names) + ["world"])
    items = list(boxes.items())
    for i in range(len(items)):
        for j in range(i):
            assert not overlap(items[i][1], items[j][1]), (items[i][0], items[j][0])
    # each label stays near its body: within a few label heights of the projected origin
    from mpl_toolkits.mplot3d import proj3d
    R, p = mb.forward_kinematics(model, q)
    for i, nm in enumerate(model.body_names):
        x, y, _ = proj3d.proj_transform(*p[i], ax.M)
        anchor = ax.transData.transform((x, y))
        box = boxes[nm]
        dist = np.hypot(max(box.x0 - anchor[0], 0, anchor[0] - box.x1), max(box.y0 - anchor[1], 0, anchor[1] - box.y1))
        assert dist < 15 * box.height, nm


def test_a_joint_type_the_table_lacks_gets_units_from_its_motion_subspace():
    """A new joint type (a cylindrical joint: a turn and a slide along one axis) still gets a unit per
    coordinate, read from S: a variable that turns is in rad, one that slides in m."""
    from multibody.view.plots import _coordinates
    cyl = SimpleNamespace(jtype=np.array([1, 7]), nq_joint=np.array([1, 2]), nv_joint=np.array([1, 2]),
                          v_start=np.array([0, 1]), joint_names=("shoulder", "wrist"),
                          S=np.array([[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1.0]]))
    q, v = _coordinates(cyl, "q"), _coordinates(cyl, "v")
    assert [u for _, u in q] == ["rad", "rad", "m"] and [u for _, u in v] == ["rad/s", "rad/s", "m/s"]
    assert q[0][0] == "shoulder" and q[1][0] != q[2][0] and all(nm.startswith("wrist ") for nm, _ in q[1:])
