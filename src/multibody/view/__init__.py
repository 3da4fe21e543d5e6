"""Look at a model and its motion: tree view, plots, the browser player, videos.

* :func:`plot_bodies` — the kinematic tree at one configuration (proNEu ``plotBodies``)
* :func:`plot_states`, :func:`plot_phase`, :func:`plot_energy`, :func:`plot_paths`, :func:`compare`
  — the OpenDE report's figures from a ``Trajectory``
* :func:`showmotion` / :func:`load_animation` — one self-contained HTML page that plays the motion
  (spatial_v2 ``showmotion``); :func:`show` — the same page inline in a notebook, no file; a run's
  contact forces are drawn there as arrows (:func:`contact_arrows`)
* :func:`export_video` — MP4 or GIF frames drawn with matplotlib
* :func:`plot_gait` — a walker's state variables over several steps (the TMT paper's figure)
* :mod:`multibody.model.appearance` (model data; here as ``appearance``) — drawing instructions, :class:`Camera`, ``default_appearance``

matplotlib is imported only when a plot is drawn.
"""
from ..model import appearance
from ..model.appearance import Camera, default_appearance
from .bodies import plot_bodies
from .export import export_video
from .gait import plot_gait
from .plots import compare, plot_energy, plot_paths, plot_phase, plot_states
from .animation import Animation, Page, contact_arrows, default_motion, load_animation, page_html, show, showmotion

__all__ = ["plot_bodies", "plot_states", "plot_gait", "plot_phase", "plot_energy", "plot_paths", "compare", "showmotion",
           "show", "page_html", "Page", "contact_arrows",
           "load_animation", "Animation", "default_motion", "export_video", "Camera", "default_appearance",
           "appearance"]
