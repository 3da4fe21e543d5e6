"""The exceptions and warnings of multibody, in one place.

Which class a fault raises (the rule :mod:`multibody._checks` implements for every layer):

- an argument of the wrong *kind* — ``None`` where a number or array is needed, a string, a complex
  or object array, an integer count given as ``2.5``, a model that is not an ``mb.Model`` —
  raises ``TypeError``;
- an argument of the right kind with a wrong *value* — NaN or inf, out of range, a wrong shape or
  length, an unknown body/joint/frame name, an index out of range — raises ``ValueError``;
- a document that cannot become a model raises :class:`URDFError` / :class:`MJCFError` (both
  ``ValueError``); something such a document says that the model keeps only with a correction,
  or ignores, is a :class:`URDFWarning` / :class:`MJCFWarning` (``UserWarning``);
- a run that cannot go on raises :class:`SimulationError` (``RuntimeError``), one class for the
  reduced-coordinate simulator and the engine alike;
- finite input whose result overflows (inf or NaN out of a kernel, e.g. q̇ = 1e200) raises
  :class:`ResultOverflowError` (a ``ValueError``, defined by the C core) naming the function.

Every message starts with the argument's name and says what was expected.

>>> from multibody import engine, errors, simulation
>>> errors.SimulationError is simulation.SimulationError is engine.SimulationError
True
>>> issubclass(errors.URDFError, ValueError)
True
"""
from __future__ import annotations

__all__ = ["SimulationError", "SimulationWarning", "URDFError", "URDFWarning", "MJCFError", "MJCFWarning",
           "ConstraintError", "CompilerNotFoundError", "EnergyUnavailable", "CLIError", "InertiaWarning",
           "ResultOverflowError"]

from .core import ResultOverflowError  # noqa: E402  (the C core raises it; named here with the others)


class SimulationError(RuntimeError):
    """A run that could not go on: an adaptive step of ``mb.simulate`` failed, or an engine step made
    the state non-finite or too fast.

    ``.trajectory``: what ``mb.simulate`` had recorded; ``.body``, ``.step``: the engine body and step
    where it failed (the engine keeps the state from before that step).  Unused ones are ``None``."""

    def __init__(self, message, trajectory=None, *, body=None, step=None):
        super().__init__(message)
        self.trajectory = trajectory
        self.body, self.step = body, step


class SimulationWarning(RuntimeWarning):
    """A run ended early because its state became non-finite (the trajectory keeps what it had)."""


class URDFError(ValueError):
    """A URDF document that cannot be turned into a model; the message names the element and line."""


class URDFWarning(UserWarning):
    """Something in a URDF was ignored or corrected (e.g. a <mimic> naming a joint that does not exist)."""


class InertiaWarning(UserWarning):
    """A body's inertia read from a file (URDF, MJCF) is not physically possible — not positive
    definite, or its principal moments break the triangle inequality; the model keeps it as written,
    as peers do.  The same inertia given to ``ModelBuilder`` is refused (``ValueError``)."""


class ConstraintError(ValueError):
    """A constraint problem cannot be solved (singular Jacobian, Gᵀ H G not positive definite …)."""


class CLIError(Exception):
    """A user-facing error of the command line: printed as one line, exit status ``code``."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


EXIT_ERROR, EXIT_USAGE = 1, 2   # the exit statuses of `multibody` for an error and for a usage error


def fail(command, error, code):
    """Print ``error`` as the one line ``multibody <command>: error: <message>``; returns ``code``
    (the command line's and its hooks' one error line, e.g. ``multibody codegen``)."""
    import sys

    message = str(error)
    while message.startswith(f"{command}: "):    # errors of the library often name the command already
        message = message[len(command) + 2:]
    print(f"multibody {command}: error: {message}", file=sys.stderr)
    return code


# Defined beside the code that raises them (files with other owners); named here so that
# ``mb.errors.X`` reaches every class.  Imported on first use: those modules import this one.
_ELSEWHERE = {"MJCFError": "multibody.model.mjcf", "MJCFWarning": "multibody.model.mjcf",
              "CompilerNotFoundError": "multibody.codegen.cache",
              "EnergyUnavailable": "multibody.simulation.trajectory"}


def __getattr__(name):
    if name in _ELSEWHERE:
        import importlib
        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'multibody.errors' has no attribute {name!r}")
