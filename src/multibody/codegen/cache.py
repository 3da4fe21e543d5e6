"""On-disk cache of compiled modules and the system C compiler.

Entries are keyed by a SHA-256 over the generated source (hence the expressions), the compiler's
path and version, the flags, the Python extension suffix and the multibody version. Each entry is
a shared library named after its own checksum plus a small JSON record pointing at it; both are
written under temporary names and renamed into place (``os.replace`` is atomic), so two processes
building the same entry never see each other's half-written files, and a record only ever points
at a complete library. A library whose checksum does not match its record is never loaded.

A cached library runs in the process that loads it, so the cache is trusted only when no one
else can write it: the folder must be owned by the user and not writable by group or others
(:func:`folder_problem`; otherwise a private folder is used, with a warning), and a record may
only name a file inside the folder (:func:`entry_path`; otherwise it is ignored and rebuilt).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sysconfig
import tempfile
import warnings

from .._io import open_regular, write_bytes

__all__ = ["CompilerNotFoundError", "find_compiler", "cache_dir", "folder_problem", "entry_path", "atomic_write",
           "sha256_file", "CFLAGS", "compiler_id", "default_flags", "host_id"]

#: flags for compiled modules (one set, like the compiled core's); :func:`default_flags` adds
#: ``-march=native`` where the compiler takes it
CFLAGS = ("-O3", "-fPIC", "-shared", "-fno-math-errno")


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


_NATIVE: dict = {}


def default_flags(cmd: list[str]) -> tuple:
    """:data:`CFLAGS`, plus ``-march=native`` when the compiler accepts it.

    A generated module is compiled on the machine that runs it (unlike the core's wheel, which
    setup.py builds portable unless ``MULTIBODY_NATIVE=1``), so it may use every instruction the
    machine has: the batch kernel's lanes become AVX2/AVX-512 registers. The cache key holds
    :func:`host_id`, so a cache folder shared by different machines never hands one a library
    built for another's instructions.
    """
    key = tuple(cmd)
    if key not in _NATIVE:
        ok = False
        with tempfile.TemporaryDirectory(prefix="mb-native-") as work:
            src = os.path.join(work, "probe.c")
            with open(src, "w", encoding="utf-8") as fh:
                fh.write("int cg_probe(void) { return 0; }\n")
            try:
                res = subprocess.run(cmd + ["-march=native", "-c", src, "-o", os.path.join(work, "probe.o")],
                                     capture_output=True, text=True, timeout=60)
                ok = res.returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _NATIVE[key] = ok
    return CFLAGS + (("-march=native",) if _NATIVE[key] else ())


_HOST: list = []


def host_id() -> str:
    """The machine's architecture and CPU (model and feature flags where the system says them):
    part of the cache key, since ``-march=native`` code runs only on CPUs with those features."""
    if not _HOST:
        parts = [platform.machine(), platform.processor()]
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.split(":")[0].strip() in ("model name", "flags", "Features", "CPU part"):
                        parts.append(line.strip())
                    elif not line.strip() and len(parts) > 2:
                        break        # the first processor's block is enough
        except OSError:
            pass
        _HOST.append(hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16])
    return _HOST[0]


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)   # a new cache folder is private
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
        return True
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False


def folder_problem(path) -> str | None:
    """Why the cache folder ``path`` cannot be trusted, or None when it can.

    A library in the cache is loaded into the process, so the folder must be one only this user
    can write: owned by the current user and not writable by group or others (a sticky bit does
    not help: another user could still create an entry before us).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp(); folder_problem(d) is None
    True
    >>> os.chmod(d, 0o777); folder_problem(d)
    'writable by its group and by other users (mode 0o777)'
    """
    if not hasattr(os, "getuid"):  # no POSIX owners: nothing to check
        return None
    try:
        st = os.stat(path)
    except OSError as e:
        return f"not usable ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    uid = os.getuid()
    if st.st_uid != uid:
        return f"owned by another user (uid {st.st_uid}; this process runs as uid {uid})"
    writers = [w for bit, w in ((stat.S_IWGRP, "its group"), (stat.S_IWOTH, "other users")) if st.st_mode & bit]
    if writers:
        return f"writable by {' and by '.join(writers)} (mode {oct(stat.S_IMODE(st.st_mode))})"
    return None


_PRIVATE: list = []   # this process's fresh private folder, made once when needed


def _private_fallback() -> str:
    """``<tmp>/multibody-codegen-<uid>`` when it is ours alone (created if missing), else a fresh
    private folder made with ``mkdtemp`` for this process."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    shared = os.path.join(tempfile.gettempdir(), f"multibody-codegen-{uid}")
    try:
        os.mkdir(shared, 0o700)
    except OSError:
        pass
    try:
        plain_folder = stat.S_ISDIR(os.lstat(shared).st_mode)   # not a link planted by someone else
    except OSError:
        plain_folder = False
    if plain_folder and folder_problem(shared) is None and _writable(shared):
        return shared
    if not _PRIVATE:
        _PRIVATE.append(tempfile.mkdtemp(prefix="multibody-codegen-", dir=tempfile.gettempdir()))
    return _PRIVATE[0]


def cache_dir(path=None) -> str:
    """The cache folder: ``path``, else ``$MULTIBODY_CACHE_DIR/codegen``, else the user cache
    (``$XDG_CACHE_HOME`` or ``~/.cache``) ``/multibody/codegen``.

    A folder that is not writable, or that another user could write (see :func:`folder_problem`),
    is replaced, with a warning, by ``<tmp>/multibody-codegen-<uid>`` if that one is this user's
    alone, else by a fresh private folder for this process.

    >>> import os, tempfile, warnings
    >>> d = tempfile.mkdtemp(); cache_dir(d) == d
    True
    >>> os.chmod(d, 0o777)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     other = cache_dir(d)
    >>> other != d, "writable by" in str(w[0].message)
    (True, True)
    """
    if path is None:
        root = os.environ.get("MULTIBODY_CACHE_DIR")
        if root:
            path = os.path.join(root, "codegen")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            path = os.path.join(base, "multibody", "codegen")
    path = os.fspath(path)
    if _writable(path):
        problem = folder_problem(path)
        if problem is None:
            return path
        why = (f"is {problem}: a library planted there would run in this process "
               f"(fix with chmod go-w or chown)")
    else:
        why = "is not writable"
    fallback = _private_fallback()
    warnings.warn(f"codegen cache folder {path!r} {why}; using {fallback!r} instead",
                  RuntimeWarning, stacklevel=3)
    return fallback


def entry_path(folder, name) -> str | None:
    """The real path of the library a cache record names, if ``name`` is a plain file name that
    resolves inside ``folder``; None otherwise (a record naming ``../x.so``, an absolute path or a
    link leading out of the folder is never followed).

    >>> entry_path("/cache", "mbcg_1.so"), entry_path("/cache", "../x.so"), entry_path("/cache", "/x.so")
    ('/cache/mbcg_1.so', None, None)
    """
    if not isinstance(name, str) or not name or name in (".", "..") or os.path.basename(name) != name \
            or (os.altsep and os.altsep in name) or "\x00" in name:
        return None
    root = os.path.realpath(folder)
    real = os.path.realpath(os.path.join(root, name))
    if real == root or os.path.commonpath([root, real]) != root:
        return None
    return real


def atomic_write(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (multibody._io), creating its folder first."""
    os.makedirs(os.path.dirname(os.path.abspath(os.fspath(path))), exist_ok=True)
    write_bytes(path, data, name="path")


def output_folder(out_dir, name: str = "out_dir") -> str:
    """``out_dir`` as a str path to a folder, created if missing; a bad one is named in the error."""
    try:
        path = os.fsdecode(os.fspath(out_dir))
    except TypeError:
        raise TypeError(f"{name}: expected a folder path (str or os.PathLike), got {type(out_dir).__name__}") from None
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(f"{name}: {path!r} exists and is not a folder")
    os.makedirs(path, exist_ok=True)
    return path


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open_regular(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_record(path) -> dict | None:
    try:
        with open_regular(path, "record", "r") as fh:
            rec = json.load(fh)
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def ext_suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"
