"""On-disk cache of compiled modules and the system C compiler.

Entries are keyed by a SHA-256 over the generated source (hence the expressions), the compiler's
path and version, the flags, the Python extension suffix and the multibody version. Each entry is
a shared library named after its own checksum plus a small JSON record pointing at it; both are
written under temporary names and renamed into place (``os.replace`` is atomic), so two processes
building the same entry never see each other's half-written files, and a record only ever points
at a complete library. A library whose checksum does not match its record is never loaded.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import warnings

from .._io import write_bytes

__all__ = ["CompilerNotFoundError", "find_compiler", "cache_dir", "atomic_write", "sha256_file",
           "CFLAGS", "compiler_id"]

#: flags for compiled modules (one set, like the compiled core's)
CFLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno")


class CompilerNotFoundError(RuntimeError):
    """No C compiler: the NumPy backend (``multibody.codegen.to_numpy``) needs none."""


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` if set, else ``cc``, ``gcc`` or ``clang`` on PATH."""
    env = os.environ.get("CC")
    if env:
        cmd = shlex.split(env)
        if cmd and shutil.which(cmd[0]):
            return cmd
        raise CompilerNotFoundError(
            f"the C compiler named by $CC ({env!r}) was not found; install a C compiler or set CC, "
            "or use multibody.codegen.to_numpy(...), which needs no compiler")
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise CompilerNotFoundError(
        "no C compiler found (looked for $CC, cc, gcc and clang on PATH); install one (e.g. gcc) "
        "or use multibody.codegen.to_numpy(...), which generates NumPy code and needs no compiler")


_COMPILER_IDS: dict = {}


def compiler_id(cmd: list[str]) -> str:
    """Path and first line of ``--version`` (part of the cache key)."""
    key = tuple(cmd)
    if key not in _COMPILER_IDS:
        try:
            out = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        _COMPILER_IDS[key] = f"{shutil.which(cmd[0]) or cmd[0]} | {out.splitlines()[0] if out else '?'}"
    return _COMPILER_IDS[key]


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError:
        return False


def cache_dir(path=None) -> str:
    """The cache folder: ``path``, else ``$MULTIBODY_CACHE_DIR/codegen``, else the user cache
    (``$XDG_CACHE_HOME`` or ``~/.cache``) ``/multibody/codegen``. An unwritable folder is replaced
    by one under the system temporary directory, with a warning."""
    if path is None:
        root = os.environ.get("MULTIBODY_CACHE_DIR")
        if root:
            path = os.path.join(root, "codegen")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            path = os.path.join(base, "multibody", "codegen")
    path = os.fspath(path)
    if _writable(path):
        return path
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = os.path.join(tempfile.gettempdir(), f"multibody-codegen-{uid}")
    warnings.warn(f"codegen cache folder {path!r} is not writable; using {fallback!r} instead",
                  RuntimeWarning, stacklevel=3)
    os.makedirs(fallback, exist_ok=True)
    return fallback


def atomic_write(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (multibody._io), creating its folder first."""
    os.makedirs(os.path.dirname(os.path.abspath(os.fspath(path))), exist_ok=True)
    write_bytes(path, data, name="path")


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_record(path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def ext_suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"
