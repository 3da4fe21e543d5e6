"""Layout helpers shared by the plots: readable 3-D axes and labels that do not sit on each other."""
from __future__ import annotations

import numpy as np
from .._extras import require


def tidy_3d_axes(ax, nbins: int = 4):
    """Fewer, smaller tick labels on a 3-D Axes and axis labels padded clear of them.

    matplotlib's default puts 6–8 ticks on each 3-D axis; seen obliquely their labels run together
    (``-0.4-0.2 0.0``) and the axis label sits on them.
    """
    require("matplotlib", "view", "plots")
    from matplotlib.ticker import MaxNLocator
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))
        axis.set_tick_params(labelsize=7, pad=1)
        axis.labelpad = 8


def spread_labels(ax, texts, directions, gap: float = 3.0):
    """Keep the 3-D ``texts`` (``ax.text`` artists) from sitting on each other, at every draw.

    Each label is moved, in screen space, off its anchor point: first along its ``direction``
    (a 3-D vector, e.g. from the parent body to the body; zero: no preference), then round the
    anchor at growing distances, to the nearest place its box overlaps no label placed before it.
    A thin leader line joins a label set far from its point.  The placing runs when the figure is
    drawn (after the 3-D projection is known), so it holds after a resize or a turn of the view.
    Returns the helper artist.
    """
    require("matplotlib", "view", "plots")
    import matplotlib.artist as martist
    import matplotlib.lines as mlines
    from matplotlib.transforms import Affine2D, IdentityTransform
    from mpl_toolkits.mplot3d import proj3d

    class _Spread(martist.Artist):
        def __init__(self):
            super().__init__()
            self.set_zorder(min(t.get_zorder() for t in texts) - 0.01)   # drawn just before the texts
            self.offsets = [Affine2D() for _ in texts]
            self.leaders = [mlines.Line2D([], [], lw=0.5, color="0.5", transform=IdentityTransform())
                            for _ in texts]
            for t, off in zip(texts, self.offsets):
                t.set_transform(ax.transData + off)
                t.set_ha("center")
                t.set_va("center")

        def _screen(self, xyz):
            x, y, _ = proj3d.proj_transform(*np.asarray(xyz, float).T, ax.M)
            return ax.transData.transform(np.column_stack([x, y]))

        def draw(self, renderer):
            if not texts:
                return
            anchors = self._screen([t.get_position_3d() for t in texts])
            tips = self._screen([np.add(t.get_position_3d(), d) for t, d in zip(texts, directions)])
            g = gap * renderer.points_to_pixels(1.0)
            placed = np.zeros((0, 4))
            angles = np.deg2rad(np.arange(0, 360, 22.5))
            for k, t in enumerate(texts):
                self.offsets[k].clear()
                box = t.get_window_extent(renderer)
                w, h = box.width + g, box.height + g
                d = tips[k] - anchors[k]
                start = np.arctan2(d[1], d[0]) if np.hypot(*d) > 1e-6 else np.pi / 4
                order = start + np.concatenate([[0.0], np.ravel(np.column_stack([angles[1:8], -angles[1:8]])),
                                                [np.pi]])
                best = None
                for r in g * np.array([1, 2, 4, 7, 11, 16, 22, 30, 40, 52]):
                    for a in order:
                        u = np.array([np.cos(a), np.sin(a)])
                        c = anchors[k] + u * r + u * np.array([w, h]) / 2   # near edge r from the point
                        b = np.array([c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2])
                        hit = ((placed[:, 0] < b[2]) & (b[0] < placed[:, 2]) &
                               (placed[:, 1] < b[3]) & (b[1] < placed[:, 3]))
                        if not hit.any():
                            best = (c, b, r, u)
                            break
                    if best is not None:
                        break
                if best is None:                     # nowhere free near the point: the last ring
                    best = (c, b, r, u)
                c, b, r, u = best
                self.offsets[k].translate(*(c - anchors[k]))
                placed = np.vstack([placed, b])
                lead = self.leaders[k]
                lead.set_data(*np.column_stack([anchors[k], c - u * np.array([w, h]) / 2]))
                lead.set_visible(r > 3 * g)
                lead.draw(renderer)

    helper = _Spread()
    ax.add_artist(helper)
    return helper
