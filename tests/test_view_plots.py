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
    assert [ln.get_label() for ln in fig.axes[0].lines] == ["q[th1]", "q[th2]"]
    assert np.array_equal(fig.axes[1].lines[1].get_ydata(), run.qd[:, 1])
    assert fig.axes[1].get_xlabel() == "t [s]"
    fig = plot_phase(run, model)
    assert len(fig.axes) == 2
    for k, ax in enumerate(fig.axes):
        assert np.array_equal(ax.lines[0].get_xdata(), run.q[:, k])
        assert np.array_equal(ax.lines[0].get_ydata(), run.qd[:, k])
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("q[th1]", "q̇[th1]")


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
