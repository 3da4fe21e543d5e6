"""The compiled C core (``_core``, built when the package is installed from ``multibody/csrc/``;
see setup.py).

``model.h``/``data.h`` (csrc/model/) document every field of the constant C model and of the per-thread
workspace; one ``.c`` file per algorithm (rnea, crba, aba, fd_crb, hybrid, energy), one
``jcalc.c``, one status table (``status.h``); the ``py_*.c`` files (listed in ``py_boundary.h``) and ``_core.c`` are the CPython boundary.
``lanes.h`` and ``aba_lanes.c`` compile rnea, crba and aba again over vectors of states (SIMD
over states) for batches.

>>> import multibody as mb
>>> n = mb.get_num_threads()
>>> mb.set_num_threads(1); mb.get_num_threads()
1
>>> mb.set_num_threads(n)
"""
from __future__ import annotations

try:
    from . import _core
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError("multibody.core._core is not built: install the package (pip install .) or run "
                      "`python setup.py build_ext --inplace` in a checkout") from exc

CModel = _core.CModel
ResultOverflowError = _core.ResultOverflowError  # a ValueError: finite inputs, inf/NaN result


def set_num_threads(n: int) -> None:
    """Number of threads a large batch (≥ 256 states) is split across (default: all cores).

    Parameters
    ----------
    n : int
        Threads for the batched kernels and ``simulate_batch``, ≥ 1.

    Raises
    ------
    TypeError
        ``n`` is not an integer.
    ValueError
        ``n`` < 1.

    Example
    -------
    >>> import multibody as mb
    >>> mb.set_num_threads(2); mb.get_num_threads()
    2
    """
    if isinstance(n, bool) or not isinstance(n, int) and not hasattr(n, "__index__"):
        raise TypeError(f"n: expected an integer number of threads, got {type(n).__name__}")
    if int(n) < 1:
        raise ValueError(f"n: expected a number of threads ≥ 1, got {int(n)}")
    _core.set_num_threads(int(n))


def get_num_threads() -> int:
    """Number of threads large batches use (see :func:`set_num_threads`).

    Returns
    -------
    int
        The number set by :func:`set_num_threads`, or the number of cores.

    Example
    -------
    >>> import multibody as mb
    >>> mb.get_num_threads() >= 1
    True
    """
    return _core.get_num_threads()


def status_message(code: int) -> str:
    """The message of a kernel status code (the one table in ``status.h``)."""
    return _core.status_message(int(code))


def release_output_memory() -> None:
    """Free the memory blocks the core keeps for the next large batch results.

    A batch result of 1 MB or more is allocated through a NumPy memory handler that, when the
    result is freed, keeps its block (up to 4 blocks, 512 MB in all: the three matrices of a
    derivatives batch among them) for the next result of the same size: a loop over batches then
    reuses warm memory instead of mapping, zeroing and unmapping fresh pages on every call.  The
    next large result of another size frees the blocks; call this to hand them back to the system
    at once.  It also empties the free list of small results (up to 8 arrays of at most 32 kB: a
    single call's result that its caller dropped is handed out again by the next call of its
    shape, rewritten whole; the list keeps a reference to each, so ``ndarray.resize`` with its
    reference check refuses a small result while the list holds it, and a weak reference to a
    dropped one lives on until the list lets it go).

    Example
    -------
    >>> import numpy as np, multibody as mb
    >>> m = mb.models.planar(3)
    >>> H = mb.crba(m, np.zeros((50_000, m.nq)))   # 3.6 MB: from the reusing handler
    >>> del H                                      # its block is kept...
    >>> mb.core.release_output_memory()            # ...until now
    """
    _core.release_output_memory()
