"""Compiled kernels' configuration.

Numba's on-disk cache (``cache=True``) revalidates a kernel only against its own source file, so a
kernel whose callee changed in another file would load stale machine code.  We therefore key the
cache directory by a digest of the package's sources: any edit gives a fresh cache.  A user's own
``NUMBA_CACHE_DIR`` is respected.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def _source_digest() -> str:
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


if not os.environ.get("NUMBA_CACHE_DIR"):
    _base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "multibody"
    numba.config.CACHE_DIR = str(_base / f"numba-{numba.__version__}-{_source_digest()}")
