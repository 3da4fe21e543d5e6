"""The TMT paper's figure of a walker's state variables over several steps (``plot_gait``)."""
from __future__ import annotations

import numpy as np

from .plots import _arrays, _legend_outside
from .._extras import require


def _variable_names(model, nq):
    """A name per position variable: the joint's name (``name[k]`` for joints with several)."""
    names = [f"q{k}" for k in range(nq)]
    if model is not None and model.nq == nq:
        for j in range(model.nb):
            n = int(model.nq_joint[j])
            for k in range(n):
                names[int(model.q_start[j]) + k] = model.joint_names[j] if n == 1 else f"{model.joint_names[j]}[{k}]"
    return names


def plot_gait(trajectory, strides=None, coordinates=None, title=None):
    """Joint angles and rates of a walk against time, heel strikes marked; returns the Figure.

    ``trajectory``: one run across strides, as :meth:`multibody.Walker.gait` returns it (its
    events named ``"heel strike k"``); ``strides``: the matching :class:`~multibody.simulation.walker.Stride`
    list, whose stride times and step lengths are written on the figure; ``coordinates``: the
    position variables to draw (names or indices; default: every variable the stance foot does
    not carry, i.e. all but the first two of ``Walker``'s models).  After each heel strike the legs
    swap labels, so the curves jump there — the TMT paper's "state variables for 4 steps".

    Parameters
    ----------
    trajectory : Trajectory
        A walk: ``t`` (s), ``q`` (rad), ``qd`` (rad/s), its events named ``"heel strike k"``.
    strides : list of Stride, optional
        :meth:`multibody.Walker.gait`'s strides; their times (s) and step lengths (m) are written
        on the figure.
    coordinates : sequence of str or int, optional
        Position variables to draw (joint names or indices).
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        ``trajectory`` lacks ``t``, ``q`` or ``qd``.
    ValueError
        A coordinate that is no joint of the model or an index out of range.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from multibody.simulation.walker import tmt_biped
    >>> model, walker = tmt_biped(upper_body=False, k_h=0.0, gamma=0.009)
    >>> traj, strides = walker.gait([0.2003, -0.4006, -0.1998, 0.0], 2, record_every=0.05)
    >>> fig = plot_gait(traj, strides)
    >>> [len(ax.lines) for ax in fig.axes]   # q1, q2 and two strike marks per panel
    [4, 4]
    """
    require("matplotlib", "view", "gait plots")
    import matplotlib.pyplot as plt
    t, q, qd = _arrays(trajectory, ("t", "q", "qd"))
    model = getattr(trajectory, "model", None)
    names = _variable_names(model, q.shape[1])
    if coordinates is None:
        cols = list(range(2, q.shape[1])) if q.shape[1] > 2 else list(range(q.shape[1]))
    else:
        cols = []
        for c in coordinates:
            if isinstance(c, str):
                if c not in names:
                    raise ValueError(f"coordinates: {c!r} is not a joint of the model; expected one of {names}")
                cols.append(names.index(c))
            else:
                if not 0 <= int(c) < q.shape[1]:
                    raise ValueError(f"coordinates: index {c} out of range 0…{q.shape[1] - 1}")
                cols.append(int(c))
    if model is not None and model.nq == model.nv:
        rate_cols = cols
    else:
        rate_cols = [c for c in cols if c < qd.shape[1]]
    strikes = [ev.t for ev in getattr(trajectory, "events", ()) if "heel strike" in ev.name]
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(8, 5.6))
    for ax, data, sel, sym, label in ((axes[0], q, cols, "", "angle [rad]"),
                                      (axes[1], qd, rate_cols, "rate of ", "rate [rad/s]")):
        for c in sel:
            ax.plot(t, data[:, c], label=f"{sym}{names[c]}")
        for ts in strikes:
            ax.axvline(ts, color="0.6", lw=0.8, ls="--")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        _legend_outside(ax, len(sel))
    axes[1].set_xlabel("t")
    heading = title or f"{getattr(trajectory, 'model_name', '') or 'walker'}: state variables over " \
                       f"{max(len(strikes), 1)} steps"
    if strides:
        T = np.mean([s.duration for s in strides])
        L = np.mean([s.step_length for s in strides])
        heading += f"\nstride time {T:.4g}, step length {L:.4g}"
    fig.suptitle(heading)
    fig.tight_layout()
    return fig
