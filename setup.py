"""Build the C extensions of multibody (metadata lives in pyproject.toml).

Flags (one helper for every extension):
  default                 portable: -O3 -std=c11 -ffp-contract=off -fno-wrapv (runs on any CPU of the architecture;
                          no a*b + c fused into one rounding, so the SIMD lanes' AVX-512 build and
                          the FMA clones give the scalar kernels' results bit for bit)
  MULTIBODY_NATIVE=1      adds -march=native (faster on the building machine, not portable)
  MULTIBODY_SANITIZE=1    AddressSanitizer + UndefinedBehaviorSanitizer: -O1 -g
                          -fsanitize=address,undefined -fno-omit-frame-pointer (make test-asan)

Build in place for development: ``python setup.py build_ext --inplace``.

All C lives in one tree, ``src/multibody/csrc/``, by role: ``common/`` (spatial algebra, small
vectors and quaternions ``vec.h`` for both extensions, lanes, status codes, the one array gate
``gate.h``), ``model/`` (the constant model, its compile step, its workspace, the joint poses),
``kernels/`` (one file per algorithm, and the SIMD lanes builds), ``sim/`` (the
fixed-step loop, contact, KKT), ``engine/`` (the maximal-coordinate engine) and ``py/`` (the
CPython boundary of both extensions).  Every ``#include "role/file.h"`` is relative to ``csrc/``,
the one include folder of both extensions.

  multibody.core._core      common/ model/ kernels/ sim/ *.c  +  py/py_*.c, py/_core.c
                            + the engine's narrow phase (ENGINE_NARROW_PHASE: the collision table and
                            its shapes), which sim/scene_contact.c calls: one collision library, built
                            into both extensions, and its LCP (ENGINE_LCP: lcp.c), which
                            sim/hard_contact.c calls: one LCP solver
  multibody.engine._engine  engine/*.c  +  py/_engine.c

The headers ship with the package (pyproject's package-data ``csrc/*/*.h``):
``multibody.codegen.compile`` #includes ``common/gate.h``, the one array gate, from the installed
package.
"""
import os
from glob import glob

import numpy
from setuptools import Extension, setup


def c_flags():
    """(compile flags, link flags) from the environment; see the module docstring."""
    # -fno-wrapv: Python's own CFLAGS (which come first) carry -fwrapv, which defines signed overflow as
    # wrapping and so keeps the compiler from assuming a loop index never wraps: 4–6 % more instructions in
    # every kernel (callgrind, Panda rnea 7207 against 6782).  Our C relies on no wrap; with it off,
    # UBSan's build checks that signed overflow never happens.
    # -Werror=implicit-function-declaration: a call to a function nothing declares (a deleted helper) otherwise
    # builds with a warning into an extension that fails to import with "undefined symbol".
    compile_args = ["-std=c11", "-ffp-contract=off", "-fno-wrapv", "-Wall", "-Wextra", "-Wno-unused-parameter",
                    "-Wno-missing-field-initializers", "-Werror=implicit-function-declaration"]
    link_args = ["-pthread"]
    if os.environ.get("MULTIBODY_SANITIZE") == "1":
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
        compile_args += ["-O1", "-g"] + san
        link_args += san
    else:
        compile_args += ["-O3"]
        if os.environ.get("MULTIBODY_NATIVE") == "1":
            compile_args += ["-march=native"]
    return compile_args, link_args + ["-lm"]


CSRC = "src/multibody/csrc"


def c_extension(name, sources, include_dirs=()):
    """One extension module with the shared flags and NumPy's headers.  It depends on every header of
    csrc/ too: without them, ``setup.py build_ext --inplace`` after a change to a header only (an
    inline function of spatial.h or lanes.h) kept the objects built from the old one."""
    compile_args, link_args = c_flags()
    return Extension(name, sources=sorted(sources), include_dirs=[numpy.get_include(), *include_dirs],
                     depends=sorted(glob(os.path.join(CSRC, "*", "*.h"))),
                     extra_compile_args=compile_args, extra_link_args=link_args)


def csrc(*patterns):
    """The C files of csrc/ that match the patterns (relative to csrc/)."""
    return [f for p in patterns for f in glob(os.path.join(CSRC, p))]


# the engine's files sim/scene_contact.c calls (they call nothing else of the engine)
ENGINE_NARROW_PHASE = ("engine/collide.c", "engine/geometry.c", "engine/convex.c", "engine/trimesh.c",
                       "engine/hfield.c")
# and its LCP solver, which sim/hard_contact.c calls (one LCP solver in the project; it calls nothing else)
ENGINE_LCP = ("engine/lcp.c",)

EXTENSIONS = [
    c_extension("multibody.core._core",
                csrc("common/*.c", "model/*.c", "kernels/*.c", "sim/*.c", "py/py_*.c", "py/_core.c",
                     *ENGINE_NARROW_PHASE, *ENGINE_LCP),
                include_dirs=[CSRC]),
    c_extension("multibody.engine._engine", csrc("engine/*.c", "py/_engine.c"), include_dirs=[CSRC]),
]

setup(ext_modules=EXTENSIONS)
