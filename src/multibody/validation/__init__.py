"""The published-reference suite: benchmark problems of the field, each run by ``mb.simulate`` (or
the library's own analysis) and compared with a reference that is not ours.

Each problem (:mod:`multibody.validation.problems`) returns a :class:`Row`: the problem, its source,
our method (integrator, step or tolerance), the error against the reference in the problem's own
measure, the threshold level met and the CPU time.  ``python -m multibody.validation`` runs them all
and writes ``docs/validation.md``; ``--check`` exits non-zero if a row misses its threshold.

References are published numbers or closed forms where they exist (the Test Set for IVP Solvers'
values, Meijaard et al.'s speeds, Jacobi's elliptic-function solutions); otherwise a second,
independent computation written for the problem (its own minimal-coordinate ODE, integrated by
SciPy's DOP853 at rtol 1e-12) — never ``mb.simulate``.

>>> from multibody.validation import benchmark_error
>>> float(benchmark_error([[1.0, 0.0]], [[1.001, 0.0005]], threshold=1e-3))
0.5
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Row", "benchmark_error", "level"]


@dataclass(frozen=True)
class Row:
    """One line of the validation table.

    ``error`` is in the problem's own measure (``measure`` says which); ``low`` and ``high`` are the
    problem's two thresholds (equal for problems with a single tolerance); ``level`` is "high",
    "low" or "missed" (:func:`level`).
    """
    key: str
    problem: str
    source: str
    reference: str
    method: str
    measure: str
    error: float
    low: float
    high: float
    cpu_s: float
    note: str = ""

    @property
    def level(self) -> str:
        """"high", "low" or "missed": the strictest threshold the error meets."""
        return level(self.error, self.low, self.high)

    @property
    def passed(self) -> bool:
        """Whether the error meets at least the low-precision threshold."""
        return self.level != "missed"


def level(error: float, low: float, high: float) -> str:
    """The threshold level an error meets.

    Parameters
    ----------
    error : float
        The error in the problem's measure (NaN never meets a threshold).
    low, high : float
        The low- and high-precision thresholds (high ≤ low).

    Returns
    -------
    str
        ``"high"`` (error ≤ high), ``"low"`` (≤ low) or ``"missed"``.

    Raises
    ------
    ValueError
        ``high`` > ``low``.

    Examples
    --------
    >>> level(5e-4, 1e-1, 1e-3), level(0.05, 1e-1, 1e-3), level(float("nan"), 1e-1, 1e-3)
    ('high', 'low', 'missed')
    """
    if high > low:
        raise ValueError(f"high: the high-precision threshold {high} must not exceed the low one {low}")
    if error <= high:
        return "high"
    if error <= low:
        return "low"
    return "missed"


def benchmark_error(y: ArrayLike, y_ref: ArrayLike, threshold: float) -> float:
    """The error of a time history against its reference, as the IFToMM benchmark thresholds read.

    The largest relative difference over the output steps and the reference variables,
    |y − y_ref| / max(|y_ref|, threshold): a variable's value below ``threshold`` (the problem's
    "threshold value", 1e-3) is not divided by, so zero crossings do not blow the measure up.

    The library's pages state the thresholds, the number of output steps and this threshold value
    but the exact formula (González et al. 2006) was not reachable offline.  If it averages these
    ratios over the output steps, or takes the ratio of root-mean-square values, this pointwise
    maximum bounds it from above (Σ dᵢ² / Σ max(|rᵢ|, t)² ≤ maxᵢ dᵢ² / max(|rᵢ|, t)²), so a row that
    meets a threshold here meets it there too; a measure of another form is not covered by this.

    Parameters
    ----------
    y, y_ref : array_like (n_steps, n_variables)
        Our values and the reference at the problem's output steps.
    threshold : float
        The problem's threshold value (> 0).

    Returns
    -------
    float
        The error (NaN if ``y`` holds a non-finite value).

    Raises
    ------
    ValueError
        Shapes that differ, or a threshold that is not > 0.

    Examples
    --------
    >>> round(benchmark_error([[2.0], [0.0]], [[2.002], [1e-4]], threshold=1e-3), 12)
    0.1
    """
    y, r = np.atleast_2d(np.asarray(y, dtype=float)), np.atleast_2d(np.asarray(y_ref, dtype=float))
    if y.shape != r.shape:
        raise ValueError(f"y: shape {y.shape} differs from the reference's {r.shape}")
    if not threshold > 0:
        raise ValueError(f"threshold: expected a number > 0, got {threshold!r}")
    if not np.all(np.isfinite(y)):
        return float("nan")
    return float(np.max(np.abs(y - r) / np.maximum(np.abs(r), threshold)))
