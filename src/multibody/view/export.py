"""``export_video``: an animation as MP4 (imageio-ffmpeg's encoder) or GIF (Pillow), drawn with matplotlib.

Each frame is :func:`multibody.view.plot_bodies` at q(t) interpolated linearly between samples
(as showmotion does), in fixed axes that hold the whole motion.
"""
from __future__ import annotations

import os

import numpy as np

from ..model.model import Model
from .. import _checks
from .._io import atomic_path, fspath
from .._extras import MissingExtraError, require

__all__ = ["export_video"]


def _frames_q(t, q, fps, speed):
    n = max(int(np.floor((t[-1] - t[0]) / speed * fps)) + 1, 2)
    tf = np.linspace(t[0], t[-1], n)
    Q = np.column_stack([np.interp(tf, t, q[:, k]) for k in range(q.shape[1])]) if q.shape[1] else np.zeros((n, 0))
    return tf, Q


def export_video(model: Model, trajectory=None, out="anim.mp4", fps: int = 25, speed: float = 1.0,
                 size=(640, 480), title=None, progress: bool = False, max_frames: int = 3000) -> str:
    """Write the motion as a video; the format follows ``out``'s suffix (``.mp4`` or ``.gif``).

    ``trajectory`` takes the forms :func:`multibody.view.showmotion` takes (None: the default
    animation).  ``speed`` > 1 plays faster.  Returns the absolute path.  MP4 needs the
    ``imageio-ffmpeg`` package (it ships an ffmpeg binary); GIF needs only Pillow (a matplotlib
    dependency).

    Parameters
    ----------
    model : Model
        A numeric model (a Mechanism draws its tree).
    trajectory : Trajectory or (tdata, qdata), optional
        The motion, as :func:`showmotion` takes it (None: the default animation).
    out : str or os.PathLike, optional
        The file to write, ending in ``.mp4`` or ``.gif`` (default ``"anim.mp4"``).
    fps : float, optional
        Frames per second of the video (> 0; default 25).
    speed : float, optional
        Playback speed (> 0; 2 plays twice as fast; default 1).
    size : (int, int), optional
        Width and height in pixels (≥ 2 each; rounded down to even; default (640, 480)).
    title : str, optional
        A title drawn on every frame.
    progress : bool, optional
        Show a progress bar.
    max_frames : int, optional
        Refuse a video of more frames (≥ 1; default 3000).

    Returns
    -------
    str
        The absolute path of the video written.

    Raises
    ------
    TypeError
        ``model`` is not a Model; ``out`` is not a path; ``fps``, ``speed``, ``size`` or
        ``max_frames`` not numbers of the right kind.
    ValueError
        ``out`` not ending in .mp4 or .gif; ``fps``, ``speed`` or ``size`` not positive; more
        frames than ``max_frames``; a trajectory that does not fit the model.
    MissingExtraError
        An ``.mp4`` without the ``imageio-ffmpeg`` package (``pip install 'multibody[view]'``).

    Examples
    --------
    >>> import os, tempfile, multibody as mb
    >>> path = export_video(mb.models.planar(2), out=os.path.join(tempfile.mkdtemp(), "p.gif"), fps=4,
    ...                     size=(160, 120))
    >>> os.path.getsize(path) > 1000
    True
    """
    require("matplotlib", "view", "figures")
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .bodies import plot_bodies
    from .animation import _motion

    if isinstance(getattr(model, "model", None), Model):      # a Mechanism: draw its tree
        model = model.model
    _checks.model(model)
    out = fspath(out, "out")
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".mp4", ".gif"):
        raise ValueError(f"out: expected a file name ending in .mp4 or .gif, got {os.fspath(out)!r}")
    fps = _checks.number("fps", fps, positive=True)
    speed = _checks.number("speed", speed, positive=True)
    max_frames = _checks.integer("max_frames", max_frames, lo=1)
    if isinstance(size, (str, bytes)) or len(size) != 2:
        raise ValueError(f"size: expected (width, height) in pixels, got {size!r}")
    size = tuple(_checks.integer("size", s, lo=2) for s in size)
    if ext == ".mp4":
        try:
            import imageio_ffmpeg
        except ImportError:
            raise MissingExtraError("MP4 export needs imageio-ffmpeg, which the core install leaves out: "
                                    "pip install 'multibody[view]'; or write a .gif", name="imageio_ffmpeg") from None
    t, q, _, _, _ = _motion(model, trajectory)
    tf, Q = _frames_q(t, q, fps, speed)
    if len(tf) > max_frames:
        raise ValueError(f"export_video: {len(tf)} frames exceed max_frames = {max_frames}; lower fps or "
                         "raise speed")
    w, h = (int(size[0]) // 2 * 2, int(size[1]) // 2 * 2)   # even sizes for yuv420p
    dpi = 100
    fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    # fixed limits that hold every frame
    lims = []
    for k in np.unique(np.linspace(0, len(Q) - 1, min(len(Q), 40)).round().astype(int)):
        ax.cla()
        plot_bodies(model, Q[k], ax=ax)
        lims.append([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
    lims = np.array(lims)
    lo, hi = lims[:, :, 0].min(axis=0), lims[:, :, 1].max(axis=0)
    centre, half = (lo + hi) / 2, (hi - lo).max() / 2

    def frame(k):
        ax.cla()
        plot_bodies(model, Q[k], ax=ax)
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_zlim(centre[2] - half, centre[2] + half)
        ax.set_title(f"{title or model.name}   t = {tf[k]:.2f} s", fontsize=9)
        fig.canvas.draw()
        return np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()

    steps = range(len(tf))
    if progress:
        from tqdm import tqdm
        steps = tqdm(steps, desc=f"frames → {os.path.basename(os.fspath(out))}", unit="frame")
    with matplotlib.rc_context({"figure.max_open_warning": 0}), atomic_path(out) as tmp:
        if ext == ".mp4":
            writer = imageio_ffmpeg.write_frames(tmp, (w, h), fps=fps, codec="libx264", pix_fmt_out="yuv420p",
                                                 output_params=["-f", "mp4"], macro_block_size=2)
            writer.send(None)
            try:
                for k in steps:
                    writer.send(frame(k).tobytes())
            finally:
                writer.close()
        else:
            from PIL import Image
            images = [Image.fromarray(frame(k)) for k in steps]
            images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:],
                           duration=int(round(1000 / fps)), loop=0)
    return os.path.abspath(os.fspath(out))
