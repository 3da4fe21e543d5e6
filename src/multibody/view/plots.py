"""Plots of a simulation run: states, phase portraits, energy, paths, and two runs compared.

The OpenDE report (TU/e 2010, §5.5–5.7) judges each double-pendulum simulation from the same set of
figures: joint angles and rates against time with phase plots (figures 5.9, 5.11, 5.12), the path
of the centre of gravity (5.9), kinetic, potential and total energy (5.9, 5.11, 5.12), and two runs
overlaid (OpenDE vs Matlab, 5.13; perturbed vs unperturbed initial state, 5.14).  Each function
here draws one of them from a ``Trajectory`` (arrays ``t``, ``q``, ``qd`` and the energies
``kinetic_energy``, ``potential_energy``, ``total_energy``) and returns its matplotlib Figure.
Any object with those attributes will do; missing energies are computed when a model is given.
"""
from __future__ import annotations

import numpy as np

from ._layout import tidy_3d_axes
from .. import _checks
from .._extras import require

__all__ = ["plot_states", "plot_phase", "plot_energy", "plot_paths", "compare"]


def _arrays(trajectory, need=("t", "q")):
    """(t, q, qd) of a trajectory, checked: 1-D increasing t, q rows matching t."""
    for k in need:
        if getattr(trajectory, k, None) is None:
            raise TypeError(f"trajectory: expected an object with array attribute {k!r} (a multibody "
                            f"Trajectory), got {type(trajectory).__name__}")
    t = np.asarray(trajectory.t, dtype=float)
    if t.ndim != 1 or len(t) < 2:
        raise ValueError(f"trajectory.t: expected a 1-D array of ≥ 2 times, got shape {t.shape}")
    out = [t]
    for k in ("q", "qd"):
        a = getattr(trajectory, k, None)
        if a is None:
            out.append(None)
            continue
        a = np.asarray(a, dtype=float)
        if a.ndim != 2 or a.shape[0] != len(t):
            raise ValueError(f"trajectory.{k}: expected shape ({len(t)}, n), got {a.shape}")
        out.append(a)
    return tuple(out)


# Components and units of each joint type's position (q) and velocity (v) variables, keyed by the
# type's name so that a type this module does not know yet still gets units (from S, below).
# Quaternion components have no unit (""); free and spherical velocities are body-frame [ω; v].
_QUAT = (("qw", ""), ("qx", ""), ("qy", ""), ("qz", ""))
_OMEGA = (("ωx", "rad/s"), ("ωy", "rad/s"), ("ωz", "rad/s"))
_COMPONENTS = {
    "fixed": ((), ()),
    "revolute": ((("", "rad"),), (("", "rad/s"),)),
    "prismatic": ((("", "m"),), (("", "m/s"),)),
    "helical": ((("", "rad"),), (("", "rad/s"),)),      # q is the angle; the slide follows it
    "spherical": (_QUAT, _OMEGA),
    "free": ((("x", "m"), ("y", "m"), ("z", "m")) + _QUAT, _OMEGA + (("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"))),
    "planar": ((("x", "m"), ("y", "m"), ("θ", "rad")), (("vx", "m/s"), ("vy", "m/s"), ("ω", "rad/s"))),
    "cylindrical": ((("θ", "rad"), ("d", "m")), (("ω", "rad/s"), ("v", "m/s"))),
}


def _coordinates(model, which="q"):
    """(label, unit) of each position (``which="q"``) or velocity (``"v"``) variable of ``model``.

    The label is the joint's name plus the component for multi-variable joints (``base x``,
    ``base qw``, ``shoulder``); the unit follows the joint type: rad, m, rad/s, m/s, or "" for
    quaternion components.  A joint type missing from the table gets its units from the motion
    subspace S: a variable that turns is in rad, one that only slides in m.

    >>> import multibody as mb
    >>> _coordinates(mb.models.ra3link_prismatic())
    [('q1', 'rad'), ('q2', 'rad'), ('x', 'm')]
    """
    from ..model.joints import JointType
    out = []
    for i, t in enumerate(model.jtype):
        nq, nv = int(model.nq_joint[i]), int(model.nv_joint[i])
        n = nq if which == "q" else nv
        try:
            comps = _COMPONENTS[JointType(int(t)).name.lower()][which != "q"]
        except (KeyError, ValueError):
            comps = ()
        if len(comps) != n:                             # an unknown type: read S
            S = np.asarray(model.S, float)[model.v_start[i]:model.v_start[i] + nv]
            if nq != nv:
                comps = tuple((str(k), "") for k in range(n))
            else:
                turns = [bool(np.any(row[:3] != 0)) for row in S]
                comps = tuple((str(k) if n > 1 else "", ("rad" if tr else "m") + ("" if which == "q" else "/s"))
                              for k, tr in enumerate(turns))
        name = model.joint_names[i]
        out += [(f"{name} {c}" if c else name, u) for c, u in comps]
    return out


def _model_of(model, trajectory, columns=None):
    """The model to name coordinates by: ``model``, else the trajectory's own (a Trajectory keeps it).

    ``columns`` = (``"q"`` or ``"v"``, n): a given ``model`` must have n such variables (a model
    that does not fit the run would name its lines wrongly)."""
    if model is not None:
        _checks.model(model)
        if columns is not None:
            which, n = columns
            size = model.nq if which == "q" else model.nv
            if size != n:
                raise ValueError(f"model: {model.name!r} has {'nq' if which == 'q' else 'nv'} = {size}, but the "
                                 f"trajectory's {'q' if which == 'q' else 'qd'} has {n} columns")
        return model
    m = getattr(trajectory, "model", None)
    return m if hasattr(m, "jtype") and hasattr(m, "joint_names") else None


def _labels(model, which, n, prefix):
    """(label, unit) of ``n`` columns: from the model when its sizes match, else ``prefix1 …`` with
    unit None (unknown)."""
    if model is not None and n == (model.nq if which == "q" else model.nv):
        return _coordinates(model, which)
    return [(f"{prefix}{k + 1}", None) for k in range(n)]


def _unit_text(unit):
    return "unitless" if unit == "" else unit


def _panel_units(labels, quantity):
    """Axis label and legend entries of one panel: the shared unit on the axis, or, when the units
    differ, each entry with its own."""
    units = {u for _, u in labels}
    if units == {None}:
        return f"{quantity} [units unknown: pass model=]", [nm for nm, _ in labels]
    if len(units) == 1:
        return f"{quantity} [{_unit_text(units.pop())}]", [nm for nm, _ in labels]
    return f"{quantity}\n[units in legend]", [f"{nm} [{_unit_text(u)}]" for nm, u in labels]


# Line styles beyond matplotlib's ten colours: colour k % 10 with style k // 10, so that every line of
# a panel has its own (colour, line style) pair (80 of them before any repeats).
_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 3)), (0, (3, 1, 3, 3)))


def _style(k):
    """Keyword arguments giving line ``k`` of a panel its own colour and line style."""
    return {"color": f"C{k % 10}", "ls": _STYLES[(k // 10) % len(_STYLES)]}


def _title(title, what, model, trajectory):
    """``title``, else ``what`` of the model (or of the trajectory's model name)."""
    if title:
        return title
    name = getattr(model, "name", None) or getattr(trajectory, "model_name", None)
    return f"{name}: {what}" if name else what


def _finish(fig, title):
    """The title in a band of its own above the panels, then the panels laid out below it.

    tight_layout leaves the suptitle a fraction of the figure's height: on a tall figure (compare
    with 18 coordinates is 44 in) that band is thinner than the title and it lands on the first panel.
    """
    fig.suptitle(title, y=1.0 - 0.08 / fig.get_figheight(), va="top")
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.3 / fig.get_figheight()))


def _legend_outside(ax, n_entries):
    """A legend right of the axes (never over the curves), in columns when there are many entries."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0,
              ncol=1 + (n_entries - 1) // 12)


def _plane_of(model, P):
    """For a planar model (or any motion that stays in one coordinate plane) the two moving axes
    (indices into x, y, z); None for motion in 3-D."""
    span = np.ptp(P.reshape(-1, 3), axis=0) if P.size else np.zeros(3)
    if getattr(model, "planar", False) or (span.max(initial=0) > 0 and np.sort(span)[0] < 1e-9 * span.max()):
        fixed = int(np.argmin(span))
        return [k for k in range(3) if k != fixed]
    return None


def _energies(trajectory, model):
    """(KE, PE, total) from the trajectory, or computed with ``mb.energy`` from q, qd and the model."""
    ke = getattr(trajectory, "kinetic_energy", None)
    pe = getattr(trajectory, "potential_energy", None)
    if ke is None or pe is None:
        if model is None:
            raise ValueError("trajectory has no energies: pass model= to compute them from q and qd")
        from ..dynamics import energy
        _, q, qd = _arrays(trajectory, ("t", "q", "qd"))
        e = energy(model, q, qd)
        ke, pe = np.asarray(e.KE, float), np.asarray(e.PE, float)
    ke, pe = np.asarray(ke, float), np.asarray(pe, float)
    tot = getattr(trajectory, "total_energy", None)
    tot = ke + pe if tot is None else np.asarray(tot, float)
    return ke, pe, tot


def plot_states(trajectory, model=None, title=None):
    """Joint positions and velocities against time (two panels); returns the Figure.

    With a model (``model=`` or the Trajectory's own) each line is named after its joint, plus the
    component for multi-variable joints (``base x``, ``base qw``, ``base ωx``), and each panel's axis
    gives the unit when all its lines share one (``position [rad]``); otherwise every legend entry
    carries its own (``x [m]``, ``q1 [rad]``, ``base qw [unitless]``).  Beyond ten lines the colours
    repeat with another line style, so no two lines of a panel look alike.  Legends sit right of the
    panels, never over the curves.

    Parameters
    ----------
    trajectory : Trajectory
        A run: ``t`` (s, shape (N,), N ≥ 2), ``q`` (N, nq) and ``qd`` (N, nv) in the model's
        units (rad, m; rad/s, m/s); any object with these attributes will do.
    model : Model, optional
        Names the lines and gives units (default: the trajectory's own model, if it keeps one).
    title : str, optional
        The figure's title (default: from the model and the run).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        ``trajectory`` lacks an array attribute the plot needs (``t``, ``q``, ``qd``); ``model``
        is not a Model.
    ValueError
        ``t`` not 1-D with ≥ 2 samples, ``q``/``qd`` rows not matching ``t``, a ``model`` whose
        nq differs from ``q``'s columns.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> t = np.linspace(0, 1, 11)
    >>> run = SimpleNamespace(t=t, q=np.column_stack([t, t ** 2]), qd=np.column_stack([1 + 0 * t, 2 * t]))
    >>> fig = plot_states(run)
    >>> [len(ax.lines) for ax in fig.axes]
    [2, 2]

    With a model (or a Trajectory, which keeps its model) each line is named after its joint and
    each axis says its unit:

    >>> import multibody as mb
    >>> fig = plot_states(run, mb.models.double_pendulum())
    >>> fig.axes[0].get_ylabel(), [l.get_label() for l in fig.axes[0].lines]
    ('position [rad]', ['th1', 'th2'])
    """
    require("matplotlib", "view", "plots")
    import matplotlib.pyplot as plt
    t, q, qd = _arrays(trajectory)
    model = _model_of(model, trajectory, ("q", q.shape[1]))
    panels = [("q", q, "position", "q")] + ([("v", qd, "velocity", "q̇")] if qd is not None else [])
    width = 7 + 1.6 * (1 + (q.shape[1] - 1) // 12)          # room for the legend beside the curves
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(width, 2.8 * len(panels)), squeeze=False)
    for ax, (which, data, quantity, sym) in zip(axes[:, 0], panels):
        ylabel, names = _panel_units(_labels(model, which, data.shape[1], sym), quantity)
        for k, nm in enumerate(names):
            ax.plot(t, data[:, k], label=nm, **_style(k))
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        _legend_outside(ax, len(names))
    axes[-1, 0].set_xlabel("t [s]")
    _finish(fig, _title(title, "joint positions and velocities", model, trajectory))
    return fig


def plot_phase(trajectory, model=None, dofs=None, title=None):
    """Phase portraits q̇_k against q_k, one panel per degree of freedom; returns the Figure.

    Parameters
    ----------
    trajectory : Trajectory
        A run: ``t`` (s, shape (N,), N ≥ 2), ``q`` (N, nq) and ``qd`` (N, nv) in the model's
        units (rad, m; rad/s, m/s); any object with these attributes will do.
        ``q`` and ``qd`` must have the same columns (no quaternion joints).
    model : Model, optional
        Names the axes (default: the trajectory's own model).
    dofs : sequence of int, optional
        The coordinates to draw (default all).
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        ``trajectory`` lacks an array attribute the plot needs (``t``, ``q``, ``qd``); ``model``
        is not a Model.
        Also ``dofs`` that are not integers.
    ValueError
        Shapes as :func:`plot_states`; ``q`` and ``qd`` with different columns; a ``dofs``
        index out of range.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> t = np.linspace(0, 6.3, 50)
    >>> fig = plot_phase(SimpleNamespace(t=t, q=np.sin(t)[:, None], qd=np.cos(t)[:, None]))
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    ('q1', 'q̇1')
    """
    require("matplotlib", "view", "plots")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    t, q, qd = _arrays(trajectory, ("t", "q", "qd"))
    if q.shape[1] != qd.shape[1]:
        raise ValueError(f"plot_phase: q has {q.shape[1]} columns and qd {qd.shape[1]}; phase plots need "
                         "one velocity per coordinate (no quaternions)")
    if dofs is None:
        dofs = range(q.shape[1])
    elif isinstance(dofs, (str, bytes)) or not hasattr(dofs, "__iter__"):
        raise TypeError(f"dofs: expected a sequence of coordinate indices, got {type(dofs).__name__} {dofs!r}")
    else:
        dofs = [_checks.integer("dofs", k) for k in dofs]
    model = _model_of(model, trajectory, ("q", q.shape[1]))
    qlab = _labels(model, "q", q.shape[1], "q")
    vlab = _labels(model, "v", qd.shape[1], "q̇")
    cols = min(len(dofs), 4)                    # a grid, never a strip of many panels in one row
    rows = -(-len(dofs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.ravel()[len(dofs):]:
        ax.set_visible(False)
    for ax, k in zip(axes.ravel(), dofs):
        if not 0 <= k < q.shape[1]:
            raise ValueError(f"dofs: index {k} out of range 0…{q.shape[1] - 1}")
        ax.plot(q[:, k], qd[:, k], lw=1.0)
        # a 3.6-inch panel holds five tick labels like −0.075 side by side, not the default seven
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        ax.plot(q[0, k], qd[0, k], "o", color="green", ms=4, label="start")
        (qn, qu), (vn, vu) = qlab[k], vlab[k]
        if qu is None:
            ax.set_xlabel(qn)
            ax.set_ylabel(vn)
        else:                               # a one-variable joint's rate has the joint's name too
            ax.set_xlabel(f"{qn} [{_unit_text(qu)}]")
            ax.set_ylabel(f"{vn + ' velocity' if vn == qn else vn} [{_unit_text(vu)}]")
        ax.grid(True, alpha=0.3)
    _finish(fig, _title(title, "phase portraits", model, trajectory))
    return fig


def plot_energy(trajectory, model=None, title=None):
    """Kinetic, potential and total energy (top) and the drift of the total, E(t) − E(0) (bottom).

    Returns the Figure; the drift panel's title states the largest |E(t) − E(0)|.

    Parameters
    ----------
    trajectory : Trajectory
        A run with ``t`` (s) and either its energies (``kinetic_energy``, ``potential_energy``,
        optional ``total_energy``, J, shape (N,)) or ``q`` and ``qd`` to compute them from.
    model : Model, optional
        Computes the energies from q and q̇ (``mb.energy``) when the trajectory has none.
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        ``trajectory`` lacks ``t`` or ``q``.
    ValueError
        The trajectory has no energies and no ``model`` is given; shapes as :func:`plot_states`.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> t = np.linspace(0, 1, 5)
    >>> run = SimpleNamespace(t=t, q=t[:, None], kinetic_energy=t, potential_energy=1 - t, total_energy=None)
    >>> fig = plot_energy(run)
    >>> [l.get_label() for l in fig.axes[0].lines]
    ['kinetic', 'potential', 'total']
    """
    require("matplotlib", "view", "plots")
    import matplotlib.pyplot as plt
    t, _, _ = _arrays(trajectory)
    ke, pe, tot = _energies(trajectory, model)
    for nm, a in (("kinetic_energy", ke), ("potential_energy", pe), ("total_energy", tot)):
        if a.shape != t.shape:
            raise ValueError(f"trajectory.{nm}: expected shape {t.shape}, got {a.shape}")
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.2))
    a1.plot(t, ke, label="kinetic", color="tab:red")
    a1.plot(t, pe, label="potential", color="tab:blue")
    a1.plot(t, tot, label="total", color="black", lw=1.6)
    a1.set_ylabel("energy [J]")
    _legend_outside(a1, 3)                  # never over the curves (the total runs along the top)
    a1.grid(True, alpha=0.3)
    drift = tot - tot[0]
    a2.plot(t, drift, color="black", label="drift")
    a2.set_ylabel("E(t) − E(0) [J]")
    a2.set_xlabel("t [s]")
    a2.set_title(f"max |drift| = {np.abs(drift).max():.3e} J", fontsize=9)
    a2.grid(True, alpha=0.3)
    _finish(fig, _title(title, "energy", model, trajectory))
    return fig


def plot_paths(trajectory, model, points=None, title=None):
    """Paths of the centre of mass and of points fixed in bodies; returns the Figure.

    ``points`` is a list of ``(body, point_in_body_coordinates)``; the centre of mass is always
    drawn.  Left: the paths in 3-D; right: their coordinates against time (report figure 5.9's
    "position of COG").

    Parameters
    ----------
    trajectory : Trajectory
        A run with ``t`` (s) and ``q`` (N, nq).
    model : Model
        The model that places the points (required).
    points : sequence of (body, point), optional
        Bodies (name or index) and points in their coordinates (m, shape (3,)).
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        ``trajectory`` lacks ``t`` or ``q``; ``model`` is not a Model.
    ValueError
        No ``model``; ``q``'s columns differ from the model's nq; an unknown body; a point that
        is not 3 coordinates.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np, multibody as mb
    >>> from types import SimpleNamespace
    >>> t = np.linspace(0, 1, 20)
    >>> run = SimpleNamespace(t=t, q=np.column_stack([t, -t]))
    >>> fig = plot_paths(run, mb.models.double_pendulum(), points=[("link2", [0, 1, 0])])
    >>> [l.get_label() for l in fig.axes[0].lines]
    ['CoM', 'link2 (0, 1, 0)']
    """
    require("matplotlib", "view", "plots")
    import matplotlib.pyplot as plt
    from ..kinematics import center_of_mass, point_position

    t, q, _ = _arrays(trajectory)
    if model is None:
        raise ValueError("plot_paths: a model is needed to place the points")
    _checks.model(model)
    if q.shape[1] != model.nq:
        raise ValueError(f"trajectory.q has {q.shape[1]} columns but model {model.name!r} has nq = {model.nq}")
    curves = [("CoM", np.asarray(center_of_mass(model, q), float))]
    for body, pt in points or ():
        i = model.body_index(body)
        label = f"{model.body_names[i]} ({', '.join(f'{x:g}' for x in np.asarray(pt, float))})"
        curves.append((label, np.asarray(point_position(model, q, i, pt), float)))
    plane = _plane_of(model, np.stack([P for _, P in curves]))
    axis_names = [c for k, c in enumerate("xyz") if plane is None or k in plane]
    fig = plt.figure(figsize=(11, 4.2))
    if plane is None:
        ax3 = fig.add_subplot(1, 2, 1, projection="3d")
        for label, P in curves:
            ax3.plot(*P.T, label=label)
        ax3.set_zlabel("z [m]")
        tidy_3d_axes(ax3)
    else:                                       # planar motion: the plane itself, true to scale
        ax3 = fig.add_subplot(1, 2, 1)
        for label, P in curves:
            ax3.plot(P[:, plane[0]], P[:, plane[1]], label=label)
        ax3.set_aspect("equal", adjustable="datalim")
        ax3.grid(True, alpha=0.3)
    ax3.set_xlabel(f"{axis_names[0]} [m]")
    ax3.set_ylabel(f"{axis_names[1]} [m]")
    # above the panel, never over the paths (in 3-D "best" does not see the curves)
    ax3.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.02), borderaxespad=0.0,
               ncol=min(len(curves), 3))
    ax2 = fig.add_subplot(1, 2, 2)
    for label, P in curves:
        for k, c in enumerate("xyz"):
            if c in axis_names:
                ax2.plot(t, P[:, k], label=f"{label} {c}", ls=("-", "--", ":")[k])
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel("position [m]")
    ax2.grid(True, alpha=0.3)
    _legend_outside(ax2, len(ax2.lines))
    _finish(fig, _title(title, "paths", model, trajectory))
    return fig


def compare(a, b, labels=("a", "b"), model=None, which="q", title=None):
    """Two runs overlaid, one panel per coordinate of ``which`` ("q" or "qd"), with their difference.

    The report's figures 5.13 (OpenDE against Matlab) and 5.14 (perturbed against unperturbed
    initial state).  Runs may have different time grids; the difference panel interpolates ``b``
    onto ``a``'s times.  Returns the Figure.

    Parameters
    ----------
    a, b : Trajectory
        The two runs: ``t`` (s) and ``q`` (or ``qd``) with the same columns.
    labels : (str, str), optional
        Names of the runs in the legends (default ``("a", "b")``).
    model : Model, optional
        Names the coordinates (default: ``a``'s own model).
    which : {"q", "qd"}, optional
        Compare positions (default) or velocities.
    title : str, optional
        The figure's title (default ``"<a> vs <b>"``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (nothing is shown or saved: ``fig.savefig(path)`` writes it).

    Raises
    ------
    TypeError
        A run lacks ``t`` or the compared array; ``model`` is not a Model.
    ValueError
        ``which`` is neither "q" nor "qd"; the runs have different columns; ``labels`` is not
        two names; a ``model`` that does not fit the runs.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> t = np.linspace(0, 1, 11)
    >>> r1 = SimpleNamespace(t=t, q=np.column_stack([t, t]))
    >>> r2 = SimpleNamespace(t=t, q=np.column_stack([t, 1.01 * t]))
    >>> fig = compare(r1, r2, labels=("RK4", "Euler"))
    >>> [len(ax.lines) for ax in fig.axes]
    [2, 2, 2]
    """
    require("matplotlib", "view", "plots")
    import matplotlib.pyplot as plt
    if which not in ("q", "qd"):
        raise ValueError(f"which: expected 'q' or 'qd', got {which!r}")
    ta, qa, qda = _arrays(a, ("t", which))
    tb, qb, qdb = _arrays(b, ("t", which))
    A, B = (qa, qb) if which == "q" else (qda, qdb)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"compare: the runs have {A.shape[1]} and {B.shape[1]} coordinates")
    n = A.shape[1]
    if isinstance(labels, (str, bytes)) or len(labels) != 2:
        raise ValueError(f"labels: expected two names (one per run), got {labels!r}")
    model = _model_of(model, a, ("q" if which == "q" else "v", n))
    coords = _labels(model, "q" if which == "q" else "v", n, "q" if which == "q" else "q̇")
    fig, axes = plt.subplots(n + 1, 1, sharex=True, figsize=(8, 2.3 * (n + 1)))
    for k in range(n):
        ax = axes[k]
        ax.plot(ta, A[:, k], label=f"{labels[0]}")
        ax.plot(tb, B[:, k], label=f"{labels[1]}", ls="--")
        nm, unit = coords[k]
        ax.set_ylabel(nm if unit is None else f"{nm} [{_unit_text(unit)}]")
        ax.grid(True, alpha=0.3)
        _legend_outside(ax, 2)
    ax = axes[n]
    ylabel, names = _panel_units(coords, f"{labels[0]} − {labels[1]}")
    for k in range(n):
        ax.plot(ta, A[:, k] - np.interp(ta, tb, B[:, k]), label=names[k], **_style(k))
    ax.set_ylabel(ylabel)
    ax.set_xlabel("t [s]")
    ax.grid(True, alpha=0.3)
    _legend_outside(ax, n)
    _finish(fig, title or f"{labels[0]} vs {labels[1]}")
    return fig
