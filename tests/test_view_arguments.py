"""Bad arguments to the viewer and plot functions: one clear error naming the argument (issue 36)."""
import os
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import multibody as mb  # noqa: E402
from multibody import view  # noqa: E402
from multibody.model.appearance import default_appearance  # noqa: E402


@pytest.fixture(scope="module")
def pendulum():
    return mb.models.double_pendulum()


@pytest.fixture(scope="module")
def run():
    t = np.linspace(0, 1, 11)
    return SimpleNamespace(t=t, q=np.column_stack([t, t ** 2]), qd=np.column_stack([1 + 0 * t, 2 * t]))


def test_plots_refuse_a_model_that_does_not_fit_the_run(run):
    three = mb.models.planar(3)
    # plot_states named two columns after a three-joint model's first joints, silently
    with pytest.raises(ValueError, match="model: 'planar\\(3\\)' has nq = 3, but the trajectory's q has 2 columns"):
        view.plot_states(run, three)
    with pytest.raises(ValueError, match="has nq = 3"):
        view.plot_phase(run, three)
    with pytest.raises(ValueError, match="has nq = 3"):
        view.compare(run, run, model=three)
    with pytest.raises(TypeError, match="model: expected a multibody.Model, got int"):
        view.plot_states(run, 3)
    fig = view.plot_states(run, mb.models.planar(2))
    assert [line.get_label() for line in fig.axes[0].lines] == ["joint1", "joint2"]


def test_plot_arguments_are_named(run, pendulum):
    with pytest.raises(TypeError, match="dofs: expected a sequence of coordinate indices, got str"):
        view.plot_phase(run, dofs="x")
    with pytest.raises(TypeError, match="dofs: expected an integer"):
        view.plot_phase(run, dofs=[0.5])
    with pytest.raises(ValueError, match="labels: expected two names"):
        view.compare(run, run, labels=("only one",))          # was an IndexError
    with pytest.raises(TypeError, match="trajectory: expected an object with array attribute 't'"):
        view.plot_gait(3)                                     # was an AttributeError
    with pytest.raises(TypeError, match="model: expected a multibody.Model"):
        view.plot_paths(run, "double_pendulum")
    with pytest.raises(ValueError, match="frame_length: expected a finite number > 0"):
        view.plot_bodies(pendulum, frame_length=-1.0)         # was drawn with flipped frames
    with pytest.raises(ValueError, match="max_mesh_faces: expected an integer ≥ 1"):
        view.plot_bodies(pendulum, max_mesh_faces=0)
    assert len(view.plot_phase(run, dofs=[1]).axes) == 1


def test_page_and_file_arguments_are_named(pendulum, tmp_path):
    with pytest.raises(TypeError, match="out: expected a file path"):
        view.showmotion(pendulum, out=None)
    with pytest.raises(TypeError, match="path: expected a file path"):
        view.load_animation(None)
    with pytest.raises(ValueError, match="height: expected an integer ≥ 1"):
        view.show(pendulum, height=-5)                         # was accepted
    with pytest.raises(TypeError, match="height: expected an integer"):
        view.show(pendulum, height="tall")
    assert 'height: 300px' in view.show(pendulum, height=300)._repr_html_()


def test_default_motion_checks_its_arguments(pendulum):
    with pytest.raises(TypeError, match="model: expected a multibody.Model, got int"):
        view.default_motion(3)                                 # was an AttributeError
    for bad in (0, -1):
        with pytest.raises(ValueError, match="samples_per_second: expected an integer ≥ 1"):
            view.default_motion(pendulum, bad)                 # was taken as 2
    with pytest.raises(TypeError, match="samples_per_second: expected an integer, got 2.5"):
        view.default_motion(pendulum, 2.5)
    t, q = view.default_motion(pendulum, 4)
    assert t[-1] == 2.0 and q.shape == (9, 2)


def test_export_video_checks_its_arguments_before_drawing(pendulum, tmp_path):
    out = str(tmp_path / "v.gif")
    with pytest.raises(TypeError, match="model: expected a multibody.Model, got int"):
        view.export_video(3, out=out)
    with pytest.raises(TypeError, match="out: expected a file path"):
        view.export_video(pendulum, out=None)
    with pytest.raises(ValueError, match="fps: expected a finite number > 0"):
        view.export_video(pendulum, out=out, fps=0)
    with pytest.raises(ValueError, match="speed: expected a finite number > 0, got nan"):
        view.export_video(pendulum, out=out, speed=float("nan"))
    with pytest.raises(ValueError, match="size: expected an integer ≥ 2, got 0"):
        view.export_video(pendulum, out=out, size=(0, 10))     # was "cannot write empty image"
    with pytest.raises(ValueError, match="size: expected \\(width, height\\)"):
        view.export_video(pendulum, out=out, size=(10,))
    assert not os.path.exists(out)


def test_default_appearance_names_its_arguments(pendulum):
    with pytest.raises(TypeError, match="model: expected a multibody.Model, got int"):
        default_appearance(3)
    with pytest.raises(TypeError, match="colour: .* got the string 'red'"):
        default_appearance(pendulum, colour="red")             # was "could not convert string to float: 'r'"
    shapes = default_appearance(pendulum, colour=(1, 0, 0))
    assert any(g.rgba == (1.0, 0.0, 0.0, 1.0) for g in shapes)
