"""Programs and libraries from Debian that some tests drive (``tools/system-deps`` installs them for
``make test``).

Without the program (or library) a test module is skipped with one visible line that says how to enable it —
except under CI (``CI=true``), where CI installs everything and a missing program is a failure.
"""
from __future__ import annotations

import os
import shutil

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_program(names, package: str, what: str) -> str:
    """The path of the first of ``names`` on PATH; otherwise skip the calling module (fail under CI).

    Call at module level: ``CHROMIUM = require_program(["chromium"], "chromium", "the browser tests")``.
    """
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    message = (f"{what}: {names[0]} not found; `make test` installs Debian's {package} when run as root "
               f"or with passwordless sudo, or: sudo apt-get install {package}")
    if under_ci():
        pytest.fail(f"{message} (CI=true: a missing test dependency is a failure)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_library(load, package: str, what: str):
    """What ``load()`` returns; if it raises (the library is missing or unusable), skip the calling
    module with one line naming the Debian ``package`` (fail under CI).

    Call at module level: ``LIB = require_library(ode.load, "libode-dev", "the ODE comparison tests")``.
    """
    try:
        return load()
    except Exception as e:                  # the loader's own message says what is wrong
        message = (f"{what}: {e} (`make test` installs Debian's {package} when run as root or with "
                   "passwordless sudo)")
    if under_ci():
        pytest.fail(f"{message} (CI=true: a missing test dependency is a failure)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


# A C compiler: the codegen tests build modules with it (CI has gcc: there a missing one fails).
needs_c_compiler = pytest.mark.skipif(not under_ci() and shutil.which("gcc") is None and shutil.which("cc") is None,
                                      reason="needs a C compiler")


@pytest.fixture(autouse=True)
def private_codegen_cache(tmp_path_factory, monkeypatch):
    """Every test compiles into one cache folder of this session, not the user's (a test module
    imports this fixture to use it)."""
    monkeypatch.setenv("MULTIBODY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "mbcache"))
