"""Build the compiled parts of multibody: the engine's step (multibody.engine._engine).

Compiler flags (one helper shared by every extension): portable ``-O3 -std=c11``;
MULTIBODY_NATIVE=1 adds ``-march=native``; MULTIBODY_SANITIZE=1 builds with AddressSanitizer and
UBSan (``-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g``) for the test suite.
"""
import glob
import os

import numpy as np
from setuptools import Extension, setup


def compile_flags():
    if os.environ.get("MULTIBODY_SANITIZE") == "1":
        flags = ["-std=c11", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1", "-g"]
        return flags, ["-fsanitize=address,undefined"]
    flags = ["-O3", "-std=c11"]
    if os.environ.get("MULTIBODY_NATIVE") == "1":
        flags.append("-march=native")
    return flags, []


cflags, ldflags = compile_flags()

setup(ext_modules=[
    Extension("multibody.engine._engine", sorted(glob.glob("src/multibody/engine/c/*.c")),
              include_dirs=[np.get_include(), "src/multibody/engine/c"],
              extra_compile_args=cflags, extra_link_args=ldflags, libraries=["m"]),
])
