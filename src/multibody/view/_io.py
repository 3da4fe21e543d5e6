"""Figures written atomically (multibody._io: complete or absent, never half-written)."""
from __future__ import annotations

import os

from .._io import atomic_path


def save_figure(fig, path, **kwargs) -> str:
    """``fig.savefig`` to ``path`` atomically (the format follows the file name)."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, **kwargs)
    return os.path.abspath(os.fspath(path))
