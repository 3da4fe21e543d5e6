"""Build the C extensions of multibody (metadata lives in pyproject.toml).

Flags (one helper for every extension):
  default                 portable: -O3 -std=c11 -ffp-contract=off (runs on any CPU of the architecture;
                          no a*b + c fused into one rounding, so the SIMD lanes' AVX-512 build and
                          the FMA clones give the scalar kernels' results bit for bit)
  MULTIBODY_NATIVE=1      adds -march=native (faster on the building machine, not portable)
  MULTIBODY_SANITIZE=1    AddressSanitizer + UndefinedBehaviorSanitizer: -O1 -g
                          -fsanitize=address,undefined -fno-omit-frame-pointer (make test-asan)

Build in place for development: ``python setup.py build_ext --inplace``.

The core's sources are every ``src/multibody/core/*.c`` (the kernels, the SIMD lanes, and the
CPython boundary ``py_*.c`` + ``_core.c``, see ``py_boundary.h``).  Its headers ship with the
package (pyproject's package-data ``*.h``): ``multibody.codegen.compile`` #includes ``gate.h``,
the one array gate, from the installed package.
"""
import os
from glob import glob

import numpy
from setuptools import Extension, setup


def c_flags():
    """(compile flags, link flags) from the environment; see the module docstring."""
    compile_args = ["-std=c11", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
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


def c_extension(name, sources, include_dirs=()):
    """One extension module with the shared flags and NumPy's headers."""
    compile_args, link_args = c_flags()
    return Extension(name, sources=sorted(sources), include_dirs=[numpy.get_include(), *include_dirs],
                     extra_compile_args=compile_args, extra_link_args=link_args)


EXTENSIONS = [
    c_extension("multibody.core._core", glob("src/multibody/core/*.c")),
    c_extension("multibody.engine._engine", glob("src/multibody/engine/c/*.c"),
                include_dirs=["src/multibody/engine/c"]),
]

setup(ext_modules=EXTENSIONS)
