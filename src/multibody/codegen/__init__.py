"""Code generation from equations of motion: NumPy source, C source with an example main, cached
compiled modules, straight-line code of the numeric algorithms, and derivatives.

proNEu's users "get function files, compiled mex-functions, or C-code" (`000_…` §3.4:
``matlabFunction``, ``emlc``, ``ccode``, ``genCCodeMatrix``, ``genCCodeExampleFile``). Here one
:class:`CodeSpec` (inputs, outputs, defaults; common-subexpression elimination by SymEngine)
feeds every backend:

* :func:`to_numpy`  — Python/NumPy source text and an in-memory function (one state or a batch);
* :func:`to_c`      — ``<prefix>.c``, ``<prefix>.h`` and a self-checking ``main.c``;
* :func:`to_matlab` — proNEu-style MATLAB/Octave function files ``<prefix>_Mfunc.m``, ``_bfunc``,
  ``_gfunc``, ``_ffunc`` and ``_paramDef``;
* :func:`to_mex`    — the same functions as C MEX sources with a ``mexFunction`` gateway
  (``mex FILE.c`` in MATLAB, ``mkoctfile --mex FILE.c`` in GNU Octave);
* :func:`compile`   — a CPython extension built with the system C compiler, cached on disk by a
  hash of the expressions, compiler, flags and multibody version; N states per call, GIL released;
  :func:`export` builds one importable under a name of your choice into a folder;
* :func:`rhs_spec`  — q̈ = M⁻¹(f − b − g) as one program (M, forcing and an unrolled LDLᵀ solve),
  for an ODE right-hand side with no call into NumPy;
* :func:`compile_algorithm` — RNEA, CRBA or ABA of one fixed model traced into straight-line C;
* :func:`derivatives` — ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ and ∂(M q̈ + b + g)/∂(q, q̇).

>>> import numpy as np, multibody as mb
>>> from multibody import codegen
>>> f = codegen.to_numpy(mb.models.double_pendulum())
>>> out = f(np.array([0.3, -0.2]), np.array([0.1, 0.5]))
>>> bool(np.allclose(out["M"], mb.crba(mb.models.double_pendulum(), np.array([0.3, -0.2]))))
True
"""
from .._extras import require as _require

for _module in ("sympy", "symengine"):   # a clear message, not a ModuleNotFoundError deep in an import
    _require(_module, "symbolic", "multibody.codegen (code generation)")

from .api import as_spec
from .c_gen import to_c
from .matlab_gen import to_matlab
from .mex_gen import to_mex
from .cache import CompilerNotFoundError
from .numpy_gen import NumpyFunction, to_numpy
from .rhs import rhs_spec
from .spec import CodeSpec, count_ops, eom_spec, make_spec

__all__ = ["to_numpy", "to_c", "to_matlab", "to_mex", "compile", "compile_algorithm", "derivatives", "make_spec", "eom_spec", "rhs_spec",
           "as_spec", "CodeSpec", "count_ops", "CompilerNotFoundError", "NumpyFunction"]


def __getattr__(name):  # the compiler and tracer modules load on first use
    if name in ("compile", "export", "CompiledFunction", "clear_cache"):
        from . import compiled
        return getattr(compiled, name)
    if name in ("compile_algorithm", "trace_algorithm"):
        from . import trace
        return getattr(trace, name)
    if name in ("derivatives", "Derivatives"):
        from . import derivs
        return getattr(derivs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
