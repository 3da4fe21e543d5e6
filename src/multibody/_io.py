"""Atomic file writing: an output is complete or absent, never half-written.

Every file multibody writes (trajectories, equations of motion, generated code, figures, pages)
goes through :func:`atomic_path`: a temporary file in the same folder, moved onto the name with
``os.replace`` only when writing succeeded.
"""
from __future__ import annotations

import contextlib
import os
import tempfile


def check_writable(path, name="out") -> str:
    """The absolute path, after checking that its folder exists and can be written (one-line error
    naming the argument ``name``)."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise ValueError(f"{name}: {path!r} is a folder; expected a file name")
    if not os.path.isdir(folder):
        raise ValueError(f"{name}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{name}: folder {folder!r} is not writable")
    return path


@contextlib.contextmanager
def atomic_path(path, suffix=None, name="out"):
    """Yield a temporary path next to ``path``; move it onto ``path`` only if the block succeeds."""
    path = check_writable(path, name)
    folder, base = os.path.split(path)
    suffix = suffix if suffix is not None else os.path.splitext(base)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".part" + suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_bytes(path, data: bytes, name="out") -> str:
    """Write ``data`` to ``path`` atomically (flushed to disk); returns the absolute path."""
    with atomic_path(path, name=name) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    return os.path.abspath(os.fspath(path))
