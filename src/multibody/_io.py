"""Files in and out: an output is complete or absent, never half-written; an input is a regular file.

Every file multibody writes (trajectories, equations of motion, generated code, figures, pages)
goes through :func:`atomic_path`: a temporary *part* file in the same folder, moved onto the name
with ``os.replace`` only when writing succeeded.

* The part is created with mode ``0o666`` and ``O_EXCL``, so the kernel applies the process
  umask (and any default ACL) exactly as for a plain ``open(path, "w")``: a saved file is 0644
  under umask 022 and 0600 under umask 077.  (``tempfile.mkstemp`` would force 0600; reading the
  umask ourselves needs ``os.umask``, which sets it process-wide and races with other threads.)
* The part is named ``.<target>.<host>.<pid>.<random>.part<ext>``.  A writer killed by SIGKILL
  cannot remove its part, so every save first removes the parts *of the same target* left by
  writers of this host that no longer run.  A part whose writer still runs, or whose writer this
  process cannot judge (another host, another user's file), is never touched; a reused pid only
  keeps an orphan a little longer.

Every user file multibody reads goes through :func:`open_regular`: opened without blocking and
refused unless it is a regular file, so a FIFO or a device cannot hang or flood the reader.
:func:`read_npz` reads a ``.npz`` only after checking every member's declared size (the zip's
uncompressed size and the shape and dtype in its ``.npy`` header) against a limit, so a small
compressed file cannot expand into gigabytes; it never unpickles.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat

import numpy as np


def package_version() -> str:
    """The installed distribution's version ("0+source" in a tree that was never installed):
    ``mb.__version__``, ``multibody --version`` and the compiled-code cache key read this one."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("multibody")
    except PackageNotFoundError:
        return "0+source"

_HOST = re.sub(r"[^A-Za-z0-9-]", "-", os.uname().nodename if hasattr(os, "uname") else "host")[:32] or "host"


def fspath(path, name="path") -> str:
    """``os.fspath(path)`` with a one-line error naming the argument for what is not a path."""
    try:
        return os.fspath(path)
    except TypeError:
        raise TypeError(f"{name}: expected a file path (str or os.PathLike), got {type(path).__name__}") from None


def check_writable(path, name="out") -> str:
    """The absolute path, after checking that its folder exists and can be written (one-line error
    naming the argument ``name``)."""
    path = os.path.abspath(fspath(path, name))
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise ValueError(f"{name}: {path!r} is a folder; expected a file name")
    if not os.path.isdir(folder):
        raise ValueError(f"{name}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{name}: folder {folder!r} is not writable")
    return path


class NotRegularFile(ValueError):
    """A path to read that names a FIFO, a folder, a device or a socket (``kind`` says which)."""

    def __init__(self, message, kind):
        super().__init__(message)
        self.kind = kind


def _kind(mode) -> str:
    for test, word in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "not a regular file"


def open_regular(path, name="path", mode="rb"):
    """Open ``path`` for reading, refusing anything but a regular file (``ValueError`` naming
    ``name``; ``FileNotFoundError`` when it does not exist).

    The file is opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor, so a
    FIFO swapped in after a check cannot block the caller.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp(); fifo = os.path.join(d, "pipe.npz"); os.mkfifo(fifo)
    >>> open_regular(fifo)
    Traceback (most recent call last):
    ...
    multibody._io.NotRegularFile: path: '...pipe.npz' is a FIFO (named pipe), not a regular file
    """
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{name}: {path!r} is {_kind(st.st_mode)}, not a regular file", _kind(st.st_mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
    except BaseException:
        os.close(fd)
        raise


def _part_pattern(base, suffix):
    return re.compile(re.escape(f".{base}.") + r"(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.[0-9a-f]+"
                      + re.escape(".part" + suffix) + r"\Z")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it runs, as another user
        return True
    return True


def remove_stale_parts(path, suffix=None) -> list[str]:
    """Remove the part files of ``path`` left by writers of this host that no longer run
    (killed mid-write); returns the paths removed.  Parts of running writers are kept."""
    path = os.path.abspath(os.fspath(path))
    folder, base = os.path.split(path)
    suffix = suffix if suffix is not None else os.path.splitext(base)[1]
    pattern, uid = _part_pattern(base, suffix), os.getuid() if hasattr(os, "getuid") else None
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for fn in names:
        m = pattern.match(fn)
        if m is None or m["host"] != _HOST or int(m["pid"]) == os.getpid() or _running(int(m["pid"])):
            continue
        part = os.path.join(folder, fn)
        try:
            st = os.lstat(part)
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            os.unlink(part)
            removed.append(part)
        except OSError:
            pass
    return removed


def _create_part(folder, base, suffix) -> str:
    """A new empty part file; mode 0o666 filtered by the umask (see the module docstring)."""
    import secrets  # here, not at the top: its hashlib/hmac/random cost every MJCF load (start-up, issue 37)

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".{base}.{_HOST}.{os.getpid()}.{secrets.token_hex(6)}.part{suffix}")
        try:
            os.close(os.open(tmp, flags, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "could not create a unique part file", folder)


@contextlib.contextmanager
def atomic_path(path, suffix=None, name="out"):
    """Yield a temporary path next to ``path``; move it onto ``path`` only if the block succeeds.

    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> with atomic_path(out) as tmp:
    ...     _ = open(tmp, "w").write("done")
    >>> open(out).read(), os.listdir(os.path.dirname(out))
    ('done', ['a.txt'])
    """
    path = check_writable(path, name)
    folder, base = os.path.split(path)
    suffix = suffix if suffix is not None else os.path.splitext(base)[1]
    remove_stale_parts(path, suffix)
    tmp = _create_part(folder, base, suffix)
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


#: default limit on the bytes a .npz may expand to when read (overridable per call)
MAX_NPZ_BYTES = 1 << 30


def _npy_header(fh):
    """(shape, fortran_order, dtype) from the header of a .npy stream (versions 1 and 2)."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    raise ValueError(f"unsupported .npy format version {version}")


def read_npz(path, *, max_bytes=MAX_NPZ_BYTES, name="path") -> dict:
    """Every array of the ``.npz`` at ``path``, after checking the sizes it declares.

    Refused with a ``ValueError`` naming ``name`` and the member: a file that is not a regular
    file, not a zip of ``.npy`` members, an object (pickled) member, a member whose header and
    zip entry disagree, and declared sizes adding up to more than ``max_bytes``.  Nothing is
    decompressed before the check.

    >>> import os, tempfile, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "a.npz"); np.savez(p, x=np.zeros((1000, 2)))
    >>> read_npz(p)["x"].shape
    (1000, 2)
    >>> read_npz(p, max_bytes=1000)
    Traceback (most recent call last):
    ...
    ValueError: path: '...a.npz' expands to more than max_bytes=1000 bytes (the zip declares 16128 bytes uncompressed)
    """
    import zipfile  # here, not at the top: only .npz files need it (start-up, issue 37)

    path = os.fspath(path)
    if not isinstance(max_bytes, (int, np.integer)) or isinstance(max_bytes, bool) or max_bytes < 0:
        raise ValueError(f"max_bytes: expected a non-negative integer, got {max_bytes!r}")
    with open_regular(path, name) as f:
        try:
            zf = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            raise ValueError(f"{name}: {path!r} is truncated or not a .npz file "
                             f"(not a complete zip archive: {e})") from None
        with zf:
            infos = zf.infolist()
            total, plan, seen = 0, [], set()
            for info in infos:
                if not info.filename.endswith(".npy") or info.is_dir():
                    raise ValueError(f"{name}: {path!r} holds {info.filename!r}, not a .npy array")
                if info.filename in seen:
                    raise ValueError(f"{name}: {path!r} holds two members named {info.filename!r}")
                seen.add(info.filename)
                total += info.file_size
                if total > max_bytes:
                    raise ValueError(f"{name}: {path!r} expands to more than max_bytes={max_bytes} bytes (the zip "
                                     f"declares {sum(i.file_size for i in infos)} bytes uncompressed)")
                try:
                    with zf.open(info) as fh:
                        shape, fortran, dtype = _npy_header(fh)
                        header_len = fh.tell()
                except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError) as e:
                    raise ValueError(f"{name}: {path!r}: member {info.filename!r} has no valid .npy header "
                                     f"({type(e).__name__}: {str(e)[:200]})") from None
                if dtype.hasobject:
                    raise ValueError(f"{name}: {path!r}: member {info.filename!r} holds Python objects "
                                     "(pickled data is never loaded)")
                nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if header_len + nbytes > max_bytes or total - info.file_size + header_len + nbytes > max_bytes:
                    raise ValueError(f"{name}: {path!r} expands to {total - info.file_size + header_len + nbytes} "
                                     f"bytes (member {info.filename!r} declares shape {shape} {dtype}), "
                                     f"more than max_bytes={max_bytes}")
                if header_len + nbytes != info.file_size:
                    raise ValueError(f"{name}: {path!r}: member {info.filename!r} declares shape {shape} {dtype} "
                                     f"({nbytes} bytes) but the zip entry holds {info.file_size - header_len} "
                                     "bytes of data (damaged file)")
                plan.append(info)
            out = {}
            for info in plan:
                try:
                    with zf.open(info) as fh:
                        out[info.filename[:-4]] = np.lib.format.read_array(fh, allow_pickle=False)
                except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError) as e:
                    raise ValueError(f"{name}: {path!r}: member {info.filename!r} is damaged "
                                     f"({type(e).__name__}: {str(e)[:200]})") from None
            return out
