"""Branch-induced sparsity (RBDA §6.5, tables 6.3-6.4; spatial_v2 ``expandLambda LTDL LTL mpyH
mpyL mpyLt mpyLi mpyLit``).

The joint-space inertia matrix ``H`` of a kinematic tree has *branch-induced sparsity*: below the
diagonal, row ``i`` is nonzero only in the columns ``lam[i], lam[lam[i]], …`` (the ancestors of
variable ``i``). The ``Lᵀ D L`` and ``Lᵀ L`` factorisations preserve that pattern, so they and
the products/solves with their factors cost O(n·depth) instead of O(n³).

Index convention (Python, unlike spatial_v2's 1-based arrays): ``lam[i]`` is the parent of
variable ``i``, ``-1`` for the base, and ``-1 <= lam[i] < i``. ``expand_lambda`` turns a body
parent array with per-joint freedom counts into this per-variable array.

Every numeric function accepts a leading batch dimension — ``H`` of shape ``(..., n, n)``, vectors
``(..., n)`` — broadcast between arguments, and loops over the batch inside compiled code
(C kernels in ``multibody/csrc/kernels/sparse.c``). The public functions check their
arguments (shapes, finiteness, symmetry, the sparsity pattern, ``lam``) and raise ``ValueError``
naming the bad argument; pass ``check=False`` in a hot loop whose inputs are already known good.

The kernels ``_ltdl_kernel(H, lam, L, d, info)`` and ``_solve_ltdl_kernel(L, d, lam, rhs, x)``
(3-D ``(B, n, n)`` / 2-D ``(B, n)`` float64 arrays, int64 ``lam``, a batch of 1 broadcasts) fill
the outputs they are given; ``fd_sparse`` uses the same C functions inside the core.

The seed names ``expandLambda, LTDL, LTL, mpyH, mpyL, mpyLt, mpyLi, mpyLit`` are aliases of the
snake_case functions (with the 0-based ``lam`` convention above).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import _core

__all__ = [
    "expand_lambda", "ltdl", "ltl", "mpy_h", "mpy_l", "mpy_lt", "mpy_li", "mpy_lit",
    "solve_ltdl", "ancestor_mask",
]

#: default relative tolerance of the symmetry / sparsity-pattern checks
TOL = 1e-10


# =========================================================================== kernels (csrc/kernels/sparse.c)
def _expand_lambda_kernel(parent, nf):
    new = np.empty(int(np.sum(nf)), dtype=np.int64)
    last = np.empty(parent.shape[0], dtype=np.int64)  # last variable of body i, or of its nearest ancestor
    start = 0
    for i in range(parent.shape[0]):
        p = parent[i]
        prev = -1 if p < 0 else last[p]
        for j in range(nf[i]):
            new[start + j] = prev if j == 0 else start + j - 1
        last[i] = start + nf[i] - 1 if nf[i] > 0 else prev
        start += nf[i]
    return new


def _ancestor_mask_kernel(lam):
    n = lam.shape[0]
    mask = np.eye(n, dtype=bool)
    for i in range(n):
        j = lam[i]
        while j >= 0:
            mask[i, j] = True
            j = lam[j]
    return mask


def _ltdl_kernel(H, lam, L, d, info):
    """RBDA table 6.3 (LTDL) on each H[b]; info[b] = failing pivot index or -1."""
    _core.ltdl_kernel(np.ascontiguousarray(H, dtype=np.float64), np.ascontiguousarray(lam, dtype=np.int64), L, d, info)


def _ltl_kernel(H, lam, L, info):
    """RBDA table 6.3 (LTL) on each H[b]; info[b] = failing pivot index or -1."""
    _core.ltl_kernel(np.ascontiguousarray(H, dtype=np.float64), np.ascontiguousarray(lam, dtype=np.int64), L, info)


def _mpy(op, M, lam, x, y):
    _core.mpy_kernel(op, np.ascontiguousarray(M, dtype=np.float64), np.ascontiguousarray(lam, dtype=np.int64),
                     np.ascontiguousarray(x, dtype=np.float64), y)


def _mpy_h_kernel(H, lam, x, y):
    _mpy(0, H, lam, x, y)


def _mpy_l_kernel(L, lam, x, y):
    _mpy(1, L, lam, x, y)


def _mpy_lt_kernel(L, lam, x, y):
    _mpy(2, L, lam, x, y)


def _mpy_li_kernel(L, lam, x, y):
    _mpy(3, L, lam, x, y)


def _mpy_lit_kernel(L, lam, x, y):
    _mpy(4, L, lam, x, y)


def _solve_ltdl_kernel(L, d, lam, rhs, x):
    """x[b] = L⁻¹ D⁻¹ L⁻ᵀ rhs[b] (inputs with leading size 1 are shared)."""
    _core.solve_ltdl_kernel(np.ascontiguousarray(L, dtype=np.float64), np.ascontiguousarray(d, dtype=np.float64),
                            np.ascontiguousarray(lam, dtype=np.int64), np.ascontiguousarray(rhs, dtype=np.float64), x)


# =========================================================================== argument checking
def _real(a, fn, name):
    arr = _core.gate(name, a)  # the C core's array gate: complex, object, masked, None are a TypeError
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{fn}: {name} contains NaN or inf")
    return arr


def _int_array(a, fn, name):
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{fn}: {name} must be a 1-D integer array, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.isfinite(arr)) \
                or np.any(arr != np.round(arr)):
            raise ValueError(f"{fn}: {name} must contain integers, got {arr!r}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _check_lam(lam, n, fn, name="lam"):
    lam = _int_array(lam, fn, name)
    if n is not None and lam.shape[0] != n:
        raise ValueError(f"{fn}: {name} must have length {n} (one entry per variable), "
                         f"got length {lam.shape[0]}")
    idx = np.arange(lam.shape[0])
    bad = np.nonzero((lam < -1) | (lam >= idx))[0]
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{fn}: {name} must satisfy -1 <= {name}[i] < i (-1 = base), "
                         f"got {name}[{i}] = {int(lam[i])}")
    return lam


def ancestor_mask(lam: ArrayLike) -> NDArray[np.bool_]:
    """The branch-induced sparsity pattern of ``lam`` (RBDA §6.5) as a boolean matrix.

    Parameters
    ----------
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).

    Returns
    -------
    mask : ndarray of bool, shape (n, n)
        ``mask[i, j]`` is True when ``j == i`` or ``j`` is an ancestor of ``i`` (``lam[i],
        lam[lam[i]], …``): the entries of the lower triangle of H and L that may be nonzero.

    Raises
    ------
    ValueError
        ``lam`` that is not a 1-D array of integers with ``-1 <= lam[i] < i``.

    Examples
    --------
    >>> ancestor_mask([-1, 0, 0]).astype(int)          # two branches on one root
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 0, 1]])
    """
    lam = _check_lam(lam, None, "ancestor_mask")
    return _ancestor_mask_kernel(lam)


def _square(A, fn, name):
    a = _real(A, fn, name)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{fn}: {name} must be a square matrix of shape (..., n, n), "
                         f"got shape {a.shape}")
    return a


def _check_pattern(A, mask, fn, name, tol, lower_only):
    """Entries outside the pattern (lower triangle only if lower_only) must be ~0."""
    outside = ~mask
    if lower_only:
        outside &= np.tril(np.ones(mask.shape, dtype=bool), -1)
    if not outside.any():
        return
    scale = max(1.0, float(np.max(np.abs(A)))) if A.size else 1.0
    vals = A[..., outside]  # (..., K) entries that must vanish
    if vals.size and np.abs(vals).max() > tol * scale:
        at = np.unravel_index(np.argmax(np.abs(vals)), vals.shape)
        i, j = (int(v) for v in np.argwhere(outside)[at[-1]])
        what = "is above the diagonal" if j > i else f"{j} is not an ancestor of {i} in lam"
        where = f" (batch element {tuple(int(k) for k in at[:-1])})" if len(at) > 1 else ""
        raise ValueError(f"{fn}: {name}[..., {i}, {j}] = {vals[at]:.3g} is outside the "
                         f"branch-induced sparsity pattern ({what}){where}")


def _check_symmetric(A, fn, name, tol):
    if A.size == 0:
        return
    scale = max(1.0, float(np.max(np.abs(A))))
    asym = float(np.max(np.abs(A - np.swapaxes(A, -1, -2))))
    if asym > tol * scale:
        raise ValueError(f"{fn}: {name} must be symmetric, max |{name} - {name}ᵀ| = {asym:.3g}")


def _batch3(A, batch, n):
    """(…, n, n) -> (B or 1, n, n) contiguous, broadcasting to ``batch`` only when needed."""
    if int(np.prod(A.shape[:-2], dtype=np.int64)) == 1:
        return np.ascontiguousarray(A.reshape(1, n, n))
    if A.shape[:-2] != batch:
        A = np.broadcast_to(A, batch + (n, n))
    return np.ascontiguousarray(A).reshape(-1, n, n)


def _batch2(x, batch, n):
    if int(np.prod(x.shape[:-1], dtype=np.int64)) == 1:
        return np.ascontiguousarray(x.reshape(1, n))
    if x.shape[:-1] != batch:
        x = np.broadcast_to(x, batch + (n,))
    return np.ascontiguousarray(x).reshape(-1, n)


def _size(batch) -> int:
    return int(np.prod(batch, dtype=np.int64))


def _matrix_vector_args(M, lam, x, fn, mname, check, tol, symmetric, lower):
    M = _square(M, fn, mname)
    n = M.shape[-1]
    lam = _check_lam(lam, n, fn) if check else np.ascontiguousarray(lam, dtype=np.int64)
    xa = _real(x, fn, "x")
    if xa.ndim < 1 or xa.shape[-1] != n:
        raise ValueError(f"{fn}: x must have shape (..., {n}) to match {mname}, got shape {xa.shape}")
    try:
        batch = np.broadcast_shapes(M.shape[:-2], xa.shape[:-1])
    except ValueError:
        raise ValueError(f"{fn}: batch shapes of {mname} {M.shape[:-2]} and x {xa.shape[:-1]} "
                         "do not broadcast") from None
    if check:
        mask = _ancestor_mask_kernel(lam)
        if symmetric:
            _check_symmetric(M, fn, mname, tol)
        _check_pattern(M, mask, fn, mname, tol, lower_only=not lower)
    return _batch3(M, batch, n), lam, _batch2(xa, batch, n), batch, n


def _nonzero_diagonal(L, fn):
    diag = np.diagonal(L, axis1=-2, axis2=-1)
    if np.any(diag == 0):
        i = int(np.argwhere(diag == 0)[0][-1])
        raise ValueError(f"{fn}: L must have a nonzero diagonal, L[..., {i}, {i}] = 0")


# =========================================================================== public functions
def expand_lambda(parent: ArrayLike, nf: ArrayLike) -> NDArray[np.int64]:
    """Expanded parent array, one entry per joint variable (RBDA table 6.4; spatial_v2
    ``expandLambda``).

    Each multi-DoF joint is replaced by a chain of single-DoF joints: the first variable of body
    ``i`` hangs from the last variable of its parent, the others from the variable before them.
    A joint with ``nf[i] == 0`` contributes no variable and its children hang from the nearest
    ancestor that has one.

    Parameters
    ----------
    parent : array_like of int, shape (nb,)
        ``parent[i]``: the parent body of body ``i``, -1 for the base, ``parent[i] < i``.
    nf : array_like of int, shape (nb,)
        ``nf[i]``: the number of freedoms (velocity variables) of joint ``i``, ≥ 0.

    Returns
    -------
    lam : ndarray of int64, shape (sum(nf),)
        The parent variable of each variable, -1 for the base.

    Raises
    ------
    ValueError
        ``parent`` that breaks ``-1 <= parent[i] < i``; ``nf`` of another length, not integers or
        negative.

    Examples
    --------
    >>> expand_lambda([-1, 0, 0, 1], [1, 2, 1, 3])
    array([-1,  0,  1,  0,  2,  4,  5])
    """
    fn = "expand_lambda"
    p = _check_lam(parent, None, fn, "parent")
    f = _int_array(nf, fn, "nf")
    if f.shape[0] != p.shape[0]:
        raise ValueError(f"{fn}: nf must have one entry per body (length {p.shape[0]}), "
                         f"got length {f.shape[0]}")
    if np.any(f < 0):
        raise ValueError(f"{fn}: nf must be >= 0, got {f.tolist()}")
    return _expand_lambda_kernel(p, f)


def ltdl(H: ArrayLike, lam: ArrayLike, *, check: bool = True,
         tol: float = TOL) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``Lᵀ D L`` factorisation preserving branch-induced sparsity (RBDA table 6.3; spatial_v2
    ``LTDL``).

    Parameters
    ----------
    H : array_like, shape (..., n, n)
        Symmetric positive definite, with the branch-induced sparsity of ``lam`` (a joint-space
        inertia matrix: :func:`multibody.crba`).
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    L : ndarray, shape (..., n, n)
        Unit lower triangular, with the sparsity pattern of ``H``.
    d : ndarray, shape (..., n)
        The diagonal of D, as a 1-D array: ``H == L.T @ np.diag(d) @ L``.

    Raises
    ------
    TypeError
        ``H`` is None, a string, complex or object array.
    ValueError
        NaN or inf; ``H`` not square, not symmetric, not positive definite (a pivot ≤ 0), or with an
        entry outside the pattern of ``lam``; a ``lam`` that breaks ``-1 <= lam[i] < i``.

    Examples
    --------
    >>> H = np.array([[3., 1., 1.], [1., 2., 0.], [1., 0., 2.]])
    >>> L, d = ltdl(H, [-1, 0, 0])
    >>> d, L[1:, 0]
    (array([2., 2., 2.]), array([0.5, 0.5]))
    >>> bool(np.allclose(L.T @ np.diag(d) @ L, H))
    True
    """
    fn = "ltdl"
    Ha = _square(H, fn, "H")
    n = Ha.shape[-1]
    lam = _check_lam(lam, n, fn) if check else np.ascontiguousarray(lam, dtype=np.int64)
    if check:
        _check_symmetric(Ha, fn, "H", tol)
        _check_pattern(Ha, _ancestor_mask_kernel(lam), fn, "H", tol, lower_only=True)
    batch = Ha.shape[:-2]
    Hb = np.ascontiguousarray(Ha).reshape(-1, n, n)
    L = np.empty_like(Hb)
    d = np.empty(Hb.shape[:2])
    info = np.empty(Hb.shape[0], dtype=np.int64)
    _ltdl_kernel(Hb, lam, L, d, info)
    _raise_not_pd(info, fn)
    return L.reshape(batch + (n, n)), d.reshape(batch + (n,))


def ltl(H: ArrayLike, lam: ArrayLike, *, check: bool = True, tol: float = TOL) -> NDArray[np.float64]:
    """``Lᵀ L`` factorisation preserving branch-induced sparsity (RBDA table 6.3; spatial_v2 ``LTL``).

    Parameters
    ----------
    H : array_like, shape (..., n, n)
        Symmetric positive definite, with the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    L : ndarray, shape (..., n, n)
        Lower triangular with a positive diagonal and the pattern of ``H``: ``L.T @ L == H``.

    Raises
    ------
    TypeError
        ``H`` is None, a string, complex or object array.
    ValueError
        NaN or inf; ``H`` not square, not symmetric, not positive definite (a pivot ≤ 0), or with an
        entry outside the pattern of ``lam``; a ``lam`` that breaks ``-1 <= lam[i] < i``.

    Examples
    --------
    >>> H = np.array([[4., 2.], [2., 5.]])
    >>> L = ltl(H, [-1, 0])
    >>> L
    array([[1.78885438, 0.        ],
           [0.89442719, 2.23606798]])
    >>> bool(np.allclose(L.T @ L, H))
    True
    """
    fn = "ltl"
    Ha = _square(H, fn, "H")
    n = Ha.shape[-1]
    lam = _check_lam(lam, n, fn) if check else np.ascontiguousarray(lam, dtype=np.int64)
    if check:
        _check_symmetric(Ha, fn, "H", tol)
        _check_pattern(Ha, _ancestor_mask_kernel(lam), fn, "H", tol, lower_only=True)
    batch = Ha.shape[:-2]
    Hb = np.ascontiguousarray(Ha).reshape(-1, n, n)
    L = np.empty_like(Hb)
    info = np.empty(Hb.shape[0], dtype=np.int64)
    _ltl_kernel(Hb, lam, L, info)
    _raise_not_pd(info, fn)
    return L.reshape(batch + (n, n))


def _raise_not_pd(info, fn):
    bad = np.nonzero(info >= 0)[0]
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"{fn}: H must be positive definite; pivot {int(info[b])} is <= 0"
                         + (f" (batch element {b})" if info.shape[0] > 1 else ""))


def mpy_h(H: ArrayLike, lam: ArrayLike, x: ArrayLike, *, check: bool = True,
          tol: float = TOL) -> NDArray[np.float64]:
    """``y = H @ x`` for a symmetric ``H`` with branch-induced sparsity, reading only its diagonal and
    the ancestor entries of its lower triangle (spatial_v2 ``mpyH``; RBDA §6.5).

    Parameters
    ----------
    H : array_like, shape (..., n, n)
        Symmetric, with the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    x : array_like, shape (..., n)
        The vector; batch dimensions broadcast with ``H``'s.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    y : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; a matrix that is not square or not symmetric; ``x`` whose length is not n; batch
        shapes that do not broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``; an entry outside
        the branch-induced pattern of ``lam``.

    Examples
    --------
    >>> mpy_h(np.array([[2., 1.], [1., 3.]]), [-1, 0], [1., 1.])
    array([3., 4.])
    """
    Hb, lam, xb, batch, n = _matrix_vector_args(H, lam, x, "mpy_h", "H", check, tol, True, False)
    y = np.empty((_size(batch), n))
    _mpy_h_kernel(Hb, lam, xb, y)
    return y.reshape(batch + (n,))


def mpy_l(L: ArrayLike, lam: ArrayLike, x: ArrayLike, *, check: bool = True,
          tol: float = TOL) -> NDArray[np.float64]:
    """``y = L @ x`` for a lower-triangular ``L`` with branch-induced sparsity (spatial_v2 ``mpyL``; RBDA §6.5).

    Parameters
    ----------
    L : array_like, shape (..., n, n)
        Lower triangular, with the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    x : array_like, shape (..., n)
        The vector; batch dimensions broadcast with ``L``'s.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    y : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; a matrix that is not square; ``x`` whose length is not n; batch shapes that do
        not broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``; an entry outside the branch-
        induced pattern of ``lam``.

    Examples
    --------
    >>> mpy_l(np.array([[1., 0.], [2., 3.]]), [-1, 0], [1., 1.])
    array([1., 5.])
    """
    Lb, lam, xb, batch, n = _matrix_vector_args(L, lam, x, "mpy_l", "L", check, tol, False, True)
    y = np.empty((_size(batch), n))
    _mpy_l_kernel(Lb, lam, xb, y)
    return y.reshape(batch + (n,))


def mpy_lt(L: ArrayLike, lam: ArrayLike, x: ArrayLike, *, check: bool = True,
           tol: float = TOL) -> NDArray[np.float64]:
    """``y = L.T @ x`` for a lower-triangular ``L`` with branch-induced sparsity (spatial_v2 ``mpyLt``; RBDA §6.5).

    Parameters
    ----------
    L : array_like, shape (..., n, n)
        Lower triangular, with the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    x : array_like, shape (..., n)
        The vector; batch dimensions broadcast with ``L``'s.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    y : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; a matrix that is not square; ``x`` whose length is not n; batch shapes that do
        not broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``; an entry outside the branch-
        induced pattern of ``lam``.

    Examples
    --------
    >>> mpy_lt(np.array([[1., 0.], [2., 3.]]), [-1, 0], [1., 1.])
    array([3., 3.])
    """
    Lb, lam, xb, batch, n = _matrix_vector_args(L, lam, x, "mpy_lt", "L", check, tol, False, True)
    y = np.empty((_size(batch), n))
    _mpy_lt_kernel(Lb, lam, xb, y)
    return y.reshape(batch + (n,))


def mpy_li(L: ArrayLike, lam: ArrayLike, x: ArrayLike, *, check: bool = True,
           tol: float = TOL) -> NDArray[np.float64]:
    """``y = inv(L) @ x`` by forward substitution along the tree (spatial_v2 ``mpyLi``; RBDA §6.5).

    Parameters
    ----------
    L : array_like, shape (..., n, n)
        Lower triangular with a nonzero diagonal and the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    x : array_like, shape (..., n)
        The vector; batch dimensions broadcast with ``L``'s.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    y : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; a matrix that is not square or with a zero on the diagonal; ``x`` whose length
        is not n; batch shapes that do not broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``; an
        entry outside the branch-induced pattern of ``lam``.

    Examples
    --------
    >>> L = np.array([[1., 0.], [2., 4.]])
    >>> y = mpy_li(L, [-1, 0], [1., 6.])
    >>> y, bool(np.allclose(L @ y, [1., 6.]))
    (array([1., 1.]), True)
    """
    Lb, lam, xb, batch, n = _matrix_vector_args(L, lam, x, "mpy_li", "L", check, tol, False, True)
    _nonzero_diagonal(Lb, "mpy_li")
    y = np.empty((_size(batch), n))
    _mpy_li_kernel(Lb, lam, xb, y)
    return y.reshape(batch + (n,))


def mpy_lit(L: ArrayLike, lam: ArrayLike, x: ArrayLike, *, check: bool = True,
            tol: float = TOL) -> NDArray[np.float64]:
    """``y = inv(L.T) @ x`` by back substitution along the tree (spatial_v2 ``mpyLit``; RBDA §6.5).

    Parameters
    ----------
    L : array_like, shape (..., n, n)
        Lower triangular with a nonzero diagonal and the branch-induced sparsity of ``lam``.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    x : array_like, shape (..., n)
        The vector; batch dimensions broadcast with ``L``'s.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    y : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; a matrix that is not square or with a zero on the diagonal; ``x`` whose length
        is not n; batch shapes that do not broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``; an
        entry outside the branch-induced pattern of ``lam``.

    Examples
    --------
    >>> L = np.array([[1., 0.], [2., 4.]])
    >>> y = mpy_lit(L, [-1, 0], [3., 4.])
    >>> y, bool(np.allclose(L.T @ y, [3., 4.]))
    (array([1., 1.]), True)
    """
    Lb, lam, xb, batch, n = _matrix_vector_args(L, lam, x, "mpy_lit", "L", check, tol, False, True)
    _nonzero_diagonal(Lb, "mpy_lit")
    y = np.empty((_size(batch), n))
    _mpy_lit_kernel(Lb, lam, xb, y)
    return y.reshape(batch + (n,))


def solve_ltdl(L: ArrayLike, d: ArrayLike, lam: ArrayLike, b: ArrayLike, *, check: bool = True,
               tol: float = TOL) -> NDArray[np.float64]:
    """Solve ``H x = b`` from the factors of ``H = Lᵀ diag(d) L`` (:func:`ltdl`): x = L⁻¹ D⁻¹ L⁻ᵀ b
    in O(n·depth) (RBDA §6.5, spatial_v2 ``mpyLi``/``mpyLit``), in compiled code.

    Parameters
    ----------
    L : array_like, shape (..., n, n)
        Unit lower-triangular factor from :func:`ltdl`.
    d : array_like, shape (..., n)
        Diagonal of D from :func:`ltdl`, nonzero.
    lam : array_like of int, shape (n,)
        The expanded parent array: ``lam[i]`` the parent variable of variable ``i``, -1 for the
        base, ``-1 <= lam[i] < i`` (:func:`expand_lambda`; a model's ``dof_parent``).
    b : array_like, shape (..., n)
        Right-hand side; the batch dimensions of ``L``, ``d`` and ``b`` broadcast together.
    check : bool, optional
        Check the arguments (default); ``False`` skips the O(n²) checks of ``lam``, the symmetry
        and the pattern in a hot loop whose inputs are known good.
    tol : float, optional
        Relative tolerance of the symmetry and pattern checks (default ``TOL`` = 1e-10).

    Returns
    -------
    x : ndarray, shape (..., n)

    Raises
    ------
    TypeError
        A matrix or vector argument is None, a string, complex or object array (``lam``: a
        ``ValueError``).
    ValueError
        NaN or inf; ``L`` not square, with a zero on its diagonal or an entry outside the pattern of
        ``lam``; a zero in ``d``; ``d`` or ``b`` whose length is not n; batch shapes that do not
        broadcast; a ``lam`` that breaks ``-1 <= lam[i] < i``.

    Examples
    --------
    >>> H = np.array([[3., 1., 1.], [1., 2., 0.], [1., 0., 2.]])
    >>> lam = [-1, 0, 0]
    >>> x = solve_ltdl(*ltdl(H, lam), lam, [5., 3., 3.])
    >>> x, bool(np.allclose(H @ x, [5., 3., 3.]))
    (array([1., 1., 1.]), True)
    """
    fn = "solve_ltdl"
    La = _square(L, fn, "L")
    n = La.shape[-1]
    lam = _check_lam(lam, n, fn) if check else np.ascontiguousarray(lam, dtype=np.int64)
    da = _real(d, fn, "d")
    ba = _real(b, fn, "b")
    for name, a in (("d", da), ("b", ba)):
        if a.ndim < 1 or a.shape[-1] != n:
            raise ValueError(f"{fn}: {name} must have shape (..., {n}) to match L, "
                             f"got shape {a.shape}")
    try:
        batch = np.broadcast_shapes(La.shape[:-2], da.shape[:-1], ba.shape[:-1])
    except ValueError:
        raise ValueError(f"{fn}: batch shapes of L {La.shape[:-2]}, d {da.shape[:-1]} and "
                         f"b {ba.shape[:-1]} do not broadcast") from None
    if check:
        _check_pattern(La, _ancestor_mask_kernel(lam), fn, "L", tol, lower_only=False)
        _nonzero_diagonal(La, fn)
        if np.any(da == 0):
            raise ValueError(f"{fn}: d must be nonzero (H singular)")
    Lb, db, bb = _batch3(La, batch, n), _batch2(da, batch, n), _batch2(ba, batch, n)
    x = np.empty((_size(batch), n))
    _solve_ltdl_kernel(Lb, db, lam, bb, x)
    return x.reshape(batch + (n,))

