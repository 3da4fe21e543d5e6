"""proNEu utilities (utils/ of the MATLAB tool), in SymPy.

* ``euler_to_rot_A_IB(a, b, c)`` = R_x(a)·R_y(b)·R_z(c)  (x-y-z convention, rotates B coordinates into I)
* ``euler_to_rot_A_BI(a, b, c)`` = A_IBᵀ
* ``dMATdt(M, q, dq)``           full time derivative Σ_k ∂M/∂q_k · q̇_k
* ``skew(v)``, ``unskew(S)``     3-vector ↔ skew-symmetric matrix (ṽ w = v × w)
* ``check_orthonormal(A, ...)``  is Aᵀ A = I (symbolically, else numerically at random values)?

Every function also accepts symengine matrices/expressions and then answers in symengine.
"""
from __future__ import annotations

import cmath
import random

import sympy as sp

__all__ = ["rot_x", "rot_y", "rot_z", "euler_to_rot_A_IB", "euler_to_rot_A_BI", "dMATdt",
           "skew", "unskew", "is_orthonormal", "check_orthonormal"]


def _backend(*objs):
    """sympy, or symengine when any argument is a symengine object."""
    import symengine as se

    for o in objs:
        if isinstance(o, (se.Basic, se.DenseMatrix)):
            return se
    return sp


def _rot(axis, a):
    from ._core import elementary_rows

    m = _backend(a)
    return m.Matrix(elementary_rows(axis, m.cos(a), m.sin(a), one=1, zero=0))


def rot_x(a):
    """Elementary rotation about x (A_IB of a frame B turned by ``a`` about x)."""
    return _rot("x", a)


def rot_y(a):
    """Elementary rotation about y."""
    return _rot("y", a)


def rot_z(a):
    """Elementary rotation about z."""
    return _rot("z", a)


def _angle(x, name: str):
    """An angle argument: a SymPy/SymEngine expression or a finite real number."""
    import numbers

    if x is None or isinstance(x, (bytes, bool)) or not (isinstance(x, (str, numbers.Number)) or hasattr(x, "free_symbols")):
        raise TypeError(f"{name}: expected an angle (rad) as a number or a SymPy/SymEngine expression, "
                        f"got {type(x).__name__}")
    if isinstance(x, numbers.Number) and not (isinstance(x, numbers.Real) and cmath.isfinite(float(x))):
        raise ValueError(f"{name}: expected a finite real angle (rad), got {x!r}")
    return x


def euler_to_rot_A_IB(alpha, beta, gamma):
    """proNEu ``eulerToRotMat_A_IB``: A_IB = R_x(α)·R_y(β)·R_z(γ) (x-y-z convention).

    Rotates coordinates of a vector in the body frame B into the inertial frame I:
    ``I_r = A_IB · B_r``. Zero angles give exact identity factors (no sin(0) terms).

    Parameters
    ----------
    alpha, beta, gamma : sympy expression or float
        The x, y and z angles (rad).

    Returns
    -------
    sympy.Matrix, shape (3, 3)
        A_IB (a SymEngine matrix if any angle is SymEngine).

    Raises
    ------
    TypeError
        An angle that is neither a number nor an expression (e.g. None).
    ValueError
        A numeric angle that is not finite.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import euler_to_rot_A_IB
    >>> a = sp.Symbol("a")
    >>> euler_to_rot_A_IB(0, 0, a)
    Matrix([
    [cos(a), -sin(a), 0],
    [sin(a),  cos(a), 0],
    [     0,       0, 1]])
    """
    m = _backend(alpha, beta, gamma)
    alpha, beta, gamma = (m.sympify(_angle(x, nm)) for x, nm in ((alpha, "alpha"), (beta, "beta"), (gamma, "gamma")))
    out = m.eye(3)
    for ang, rot in ((alpha, rot_x), (beta, rot_y), (gamma, rot_z)):
        if ang != 0:
            out = out * rot(ang)
    return out


def euler_to_rot_A_BI(alpha, beta, gamma):
    """proNEu ``eulerToRotMat_A_BI`` = (R_x(α)R_y(β)R_z(γ))ᵀ: rotates I coordinates into B.

    Parameters
    ----------
    alpha, beta, gamma : sympy expression or float
        The x, y and z angles (rad).

    Returns
    -------
    sympy.Matrix, shape (3, 3)
        A_BI = A_IBᵀ.

    Raises
    ------
    TypeError
        An angle that is neither a number nor an expression (e.g. None).
    ValueError
        A numeric angle that is not finite.

    Examples
    --------
    >>> from multibody.symbolic import euler_to_rot_A_BI, euler_to_rot_A_IB
    >>> A = euler_to_rot_A_BI(0.1, 0.2, 0.3) * euler_to_rot_A_IB(0.1, 0.2, 0.3)
    >>> max(abs(float(e)) for e in A - A.eye(3)) < 1e-15
    True
    """
    return euler_to_rot_A_IB(alpha, beta, gamma).T


def dMATdt(M, q, dq):
    """Full time derivative of a matrix (or vector) of expressions of q: Σ_k ∂M/∂q_k · q̇_k.

    proNEu ``dMATdt`` (for expressions without explicit time dependence).

    Parameters
    ----------
    M : sympy.Matrix or sequence
        Matrix or vector of expressions of q.
    q, dq : sequence of sympy.Symbol
        Coordinates and their rates, of equal length.

    Returns
    -------
    sympy.Matrix
        dM/dt, the shape of M (SymEngine if M or q is SymEngine).

    Raises
    ------
    ValueError
        q and dq have different lengths.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import dMATdt
    >>> q, dq = sp.symbols("q dq")
    >>> dMATdt(sp.Matrix([sp.sin(q), q**2]), [q], [dq])
    Matrix([
    [dq*cos(q)],
    [   2*dq*q]])
    """
    q, dq = list(q), list(dq)
    if len(q) != len(dq):
        raise ValueError(f"dMATdt: q has {len(q)} entries, dq has {len(dq)}")
    m = _backend(M, *q)
    M = m.Matrix(M)
    out = m.zeros(M.rows, M.cols)
    for qk, dqk in zip(q, dq):
        out += M.diff(qk) * dqk
    return out


def skew(v):
    """Skew-symmetric matrix ṽ with ṽ·w = v × w (proNEu ``skew``).

    Parameters
    ----------
    v : sequence of 3
        A 3-vector of numbers or expressions.

    Returns
    -------
    sympy.Matrix, shape (3, 3)
        ``[[0, -z, y], [z, 0, -x], [-y, x, 0]]``.

    Raises
    ------
    TypeError
        ``v`` is a string or not iterable.
    ValueError
        ``v`` does not have 3 entries.

    Examples
    --------
    >>> from multibody.symbolic import skew
    >>> skew([1, 2, 3]) * skew([1, 2, 3]).T == skew([1, 2, 3]).T * skew([1, 2, 3])
    True
    >>> list(skew([1, 2, 3]) * __import__("sympy").Matrix([4, 5, 6]))     # (1, 2, 3) × (4, 5, 6)
    [-3, 6, -3]
    """
    m = _backend(v)
    if isinstance(v, (str, bytes)):
        raise TypeError("skew: expected a 3-vector of numbers or expressions, got a string")
    try:
        entries = list(v)
    except TypeError:
        raise TypeError(f"skew: expected a 3-vector of numbers or expressions, got {type(v).__name__}") from None
    if len(entries) != 3:
        raise ValueError(f"skew: expected a 3-vector, got {len(entries)} entries")
    x, y, z = entries
    return m.Matrix([[0, -z, y], [z, 0, -x], [-y, x, 0]])


def unskew(S):
    """Vector of a skew-symmetric matrix (proNEu ``unskew``): [S32, S13, S21].

    Parameters
    ----------
    S : sympy.Matrix or array_like, shape (3, 3)
        A skew-symmetric matrix ṽ. A numeric one is checked (S + Sᵀ = 0); a symbolic one is
        taken as skew-symmetric (e.g. Aᵀ dA/dq before simplification).

    Returns
    -------
    sympy.Matrix, shape (3, 1)
        v with ṽ = S.

    Raises
    ------
    ValueError
        ``S`` is not 3×3, or a numeric ``S`` is not skew-symmetric.

    Examples
    --------
    >>> from multibody.symbolic import skew, unskew
    >>> unskew(skew([1, 2, 3])).T
    Matrix([[1, 2, 3]])
    """
    m = _backend(S)
    S = m.Matrix(S)
    if (S.rows, S.cols) != (3, 3):
        raise ValueError(f"unskew: expected a 3×3 matrix, got {S.rows}×{S.cols}")
    if not S.free_symbols:   # a numeric matrix: refuse one that is not skew (its entries would be read wrongly)
        asym = max(abs(complex(m.sympify(S[i, j] + S[j, i]).evalf())) for i in range(3) for j in range(3))
        scale = max(1.0, max(abs(complex(m.sympify(e).evalf())) for e in S))
        if not asym <= 1e-9 * scale:
            raise ValueError(f"unskew: the matrix is not skew-symmetric (|S + Sᵀ| = {asym:.3g}); "
                             "unskew reads [S32, S13, S21] of S = ṽ")
    return m.Matrix([S[2, 1], S[0, 2], S[1, 0]])


def is_orthonormal(A, *, samples: int = 3, tol: float = 1e-9, seed: int = 0, proper: bool = True,
                   exact: bool = True) -> bool:
    """True if Aᵀ A = I (and, with ``proper``, det A = +1: a rotation, not a reflection).

    With ``exact``, first tries exact arithmetic (Aᵀ A − I in a canonical sin/cos polynomial form,
    exact for products of rotations in independent angles); if that does not give zero (or
    ``exact=False``, for long chains where that form is expensive), evaluates Aᵀ A − I
    at ``samples`` random values of its free symbols (uniform in [-2, 2]) and accepts it when
    every entry is below ``tol``. The determinant is checked at one random point.

    Parameters
    ----------
    A : sympy.Matrix or array_like
        The matrix; anything but 3×3 gives False.
    samples : int, optional
        Random points of the numeric test (≥ 1; default 3).
    tol : float, optional
        Largest accepted entry of Aᵀ A − I at a sample (default 1e-9).
    seed : int, optional
        Seed of the random points (the answer is reproducible).
    proper : bool, optional
        Also require det A = +1 (default True).
    exact : bool, optional
        Try the exact test first (default True).

    Returns
    -------
    bool
        Whether A is orthonormal (and proper).

    Raises
    ------
    TypeError
        ``A`` is a string or cannot be read as a matrix.
    ValueError
        ``samples`` is not a positive integer, or ``tol`` not a positive finite number.

    Examples
    --------
    >>> import sympy as sp
    >>> from multibody.symbolic import euler_to_rot_A_IB, is_orthonormal
    >>> a, b, c = sp.symbols("a b c")
    >>> is_orthonormal(euler_to_rot_A_IB(a, b, c))
    True
    >>> is_orthonormal(sp.diag(1, 1, -1)), is_orthonormal(sp.diag(1, 1, -1), proper=False)
    (False, True)
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples: expected a positive integer, got {samples!r}")
    if not (isinstance(tol, (int, float)) and 0 < tol < float("inf")):
        raise ValueError(f"tol: expected a positive finite tolerance, got {tol!r}")
    if isinstance(A, (str, bytes)):
        raise TypeError("A: expected a matrix, got a string")
    try:
        A = sp.Matrix(A) if _backend(A) is sp else sp.Matrix(A.tolist())
    except (TypeError, ValueError) as exc:
        raise TypeError(f"A: expected a matrix of numbers or expressions ({exc})") from None
    if (A.rows, A.cols) != (3, 3):
        return False
    D = A.T * A - sp.eye(3)
    free = sorted(D.free_symbols | A.free_symbols, key=lambda s: s.name)
    rng = random.Random(seed)
    fA = _numeric(free, A)

    def sample():
        return [rng.uniform(-2.0, 2.0) for _ in free]

    if proper:
        import numpy as np

        for _ in range(samples):
            try:
                det = float(np.linalg.det(np.array(fA(*sample()), dtype=float)))
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                continue
            if det < 0:
                return False
            break
    if not D.free_symbols:
        return all(abs(complex(sp.N(e))) < tol for e in D)
    from ._core import trig_canonical

    if exact and all(trig_canonical(e) == 0 for e in D):
        return True
    f = _numeric(free, D)
    for _ in range(samples):
        try:
            num = f(*sample())
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if not all(cmath.isfinite(complex(x)) for row in num for x in row):
            continue  # outside the expression's domain at this sample
        if any(abs(complex(x)) > tol for row in num for x in row):
            return False
    return True


def _numeric(free, A):
    """A numeric function of ``free`` returning A's entries as nested lists: SymEngine's Lambdify
    (microseconds to build; SymPy's lambdify prints and compiles source, ~40 ms a matrix), or
    SymPy's for an expression SymEngine cannot take."""
    import symengine as se
    try:
        args = [se.Symbol(x.name) for x in free]
        fn = se.Lambdify(args, se.Matrix(A.tolist()), real=False)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, AttributeError):
        return sp.lambdify(free, A.tolist(), modules="math")
    n = A.rows
    return lambda *vals: [[complex(x) for x in row] for row in fn(vals).reshape(n, -1).tolist()]


def check_orthonormal(A, name: str = "A", *, what: str | None = None, exact: bool = True) -> None:
    """Raise ``ValueError`` naming ``name`` (and ``what``) unless A is a 3×3 rotation matrix."""
    try:
        shape = (A.rows, A.cols)
    except AttributeError:
        A = sp.Matrix(A)
        shape = (A.rows, A.cols)
    label = f"{name}: {what} is" if what else f"{name}:"
    if shape != (3, 3):
        raise ValueError(f"{label} a rotation matrix must be 3×3, got {shape[0]}×{shape[1]}")
    if not is_orthonormal(A, exact=exact):
        raise ValueError(f"{label} not a rotation matrix (not orthonormal: Aᵀ A ≠ I, or det A ≠ +1)")
