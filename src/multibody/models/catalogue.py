"""The one table of built-in models that every command-line subcommand reads.

A MODEL argument is a name from this table, optionally with a size after a colon (``planar:3``,
``auto_tree:15``) for the constructors that take one.

>>> from multibody.models.catalogue import build, catalogue
>>> build("planar:3").nv, "rolling_disc" in catalogue()
(3, True)
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Entry:
    """A built-in model: ``make()`` (or ``make(n)`` when ``sized``) and one line of description."""
    make: Callable
    about: str
    sized: bool = False


def catalogue() -> dict[str, Entry]:
    """name → :class:`Entry` for every built-in model (a Model, or a Mechanism for the TMT systems)."""
    from . import (a01_pendulum, a02_n_four_bar, a03_andrews, a04_bricard, a05_flyball_governor, auto_tree,
                   biped_upper_body, clemens_joint, double_elbow, double_pendulum, flapping_flyer, gfx_example, ma23,
                   planar, ra3link, ra3link_prismatic, rolling_disc, scissor, single_pendulum, singlebody, starleth,
                   vee, whipple_bicycle)
    return {
        "double_pendulum": Entry(double_pendulum, "the OpenDE report's double pendulum (default)"),
        "single_pendulum": Entry(single_pendulum, "the OpenDE report's (colliding) single pendulum"),
        "planar": Entry(lambda n=2: planar(n), "spatial_v2 planar(n): n unit rods (planar:N, default 2)", True),
        "auto_tree": Entry(lambda n=7: auto_tree(n, bf=2, skew=np.pi / 4, taper=0.95),
                           "spatial_v2 autoTree(n, 2, π/4, 0.95) (auto_tree:N, default 7)", True),
        "vee": Entry(vee, "spatial_v2 vee: two rods at 45°, free-floating"),
        "singlebody": Entry(singlebody, "spatial_v2 singlebody: a free-floating box"),
        "scissor": Entry(scissor, "spatial_v2 scissor: two strips joined at their middles"),
        "double_elbow": Entry(double_elbow, "spatial_v2 double-elbow planar arm (two joints with equal angles)"),
        "rolling_disc": Entry(rolling_disc, "spatial_v2 rolling disc: a free-floating polyhedral prism"),
        "whipple_bicycle": Entry(whipple_bicycle, "Meijaard et al. 2007 benchmark bicycle: two wheels rolling "
                                 "without slipping (nonholonomic)"),
        "gfx_example": Entry(gfx_example, "spatial_v2 gfxExample: every drawing instruction"),
        "gfx_example_tracking": Entry(lambda: gfx_example(tracking=True), "gfxExample with the tracking camera"),
        "ra3link": Entry(ra3link, "proNEu RA3Link arm (manual §3.1)"),
        "ra3link_prismatic": Entry(ra3link_prismatic, "proNEu RA3LinkPrismatic arm (manual §3.2)"),
        "starleth": Entry(starleth, "proNEu StarlETH quadruped, Euler-angle base (manual §3.3)"),
        "ma23": Entry(ma23, "the lecture slides' MA 23 arm (6 revolute joints, coefficient table)"),
        "biped_upper_body": Entry(biped_upper_body, "TMT paper's passive biped with upper body"),
        "flapping_flyer": Entry(flapping_flyer, "TMT paper's flapping flyer"),
        "clemens_joint": Entry(clemens_joint, "TMT paper's Clemens joint, 3-RSR"),
        "a01_pendulum": Entry(a01_pendulum, "IFToMM benchmark A01: simple pendulum (1 kg on a massless 1 m bar)"),
        "a02_n_four_bar": Entry(lambda n=40: a02_n_four_bar(n), "IFToMM benchmark A02: N-four-bar mechanism, "
                                "singular when flat (a02_n_four_bar:N, default 40)", True),
        "a03_andrews": Entry(a03_andrews, "IFToMM benchmark A03: Andrews' squeezing mechanism (7 bodies, 3 loops)"),
        "a04_bricard": Entry(a04_bricard, "IFToMM benchmark A04: Bricard's mechanism (5 rods, 6 revolute joints; "
                             "redundant closure)"),
        "a05_flyball_governor": Entry(a05_flyball_governor, "IFToMM benchmark A05: stiff flyball governor "
                                      "(its spring-dampers: models.iftomm.a05_forces as f_ext)"),
    }


#: the largest size a MODEL argument may ask for (planar:1000000 took 20 minutes to build)
MAX_SIZE = 10_000


class UnknownModel(ValueError):
    """A MODEL argument that names no built-in model (or gives a size to one that takes none)."""


def build(spec: str):
    """The built-in model ``spec`` names: ``"name"`` or ``"name:N"``; :class:`UnknownModel` otherwise."""
    name, colon, size = spec.partition(":")
    table = catalogue()
    if name not in table:
        close = difflib.get_close_matches(name, list(table), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownModel(f"unknown model {name!r}{hint} (built-in models: {', '.join(sorted(table))}; "
                           f"or give a URDF or MJCF file)")
    entry = table[name]
    if not colon:
        return entry.make()
    if not entry.sized:
        raise UnknownModel(f"model {name!r} takes no size (':{size}')")
    try:
        n = int(size)
    except ValueError:
        raise UnknownModel(f"model {spec!r}: the size after ':' must be an integer") from None
    if not 1 <= n <= MAX_SIZE:
        raise UnknownModel(f"model {spec!r}: the size after ':' must be between 1 and {MAX_SIZE:,} bodies "
                           f"(larger trees take minutes to build; in Python, call the constructor itself)")
    try:
        return entry.make(n)
    except ValueError as e:
        raise UnknownModel(f"model {spec!r}: {e}") from None
