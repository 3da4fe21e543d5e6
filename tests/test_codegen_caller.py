"""A compiled module's C paths for one state: the caller behind ``f(q, dq, …)`` and ``one()``.

Also in ``make test-asan`` (ASAN_TESTS): with libasan preloaded the modules here are compiled with
``-fsanitize=address,undefined``, so the template's C (templates/module.c) runs under the sanitizers
like the core's.
"""
import os

import numpy as np
import pytest

import multibody as mb
from multibody import codegen
from multibody.codegen import cache as K
from system_deps import needs_c_compiler, private_codegen_cache  # noqa: F401 (an autouse fixture)

SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")


def compiled(model):
    flags = None
    if SANITIZED:
        flags = list(K.default_flags(K.find_compiler())) + ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    return codegen.compile(model, flags=flags)


@needs_c_compiler
def test_one_state_calls_stay_in_c_and_the_rest_take_the_general_path():
    """f(q, dq) with the trailing inputs left out runs in the module's C caller with the function's defaults;
    keywords, batches and bad shapes go to ``_general`` (here replaced by a recorder: the handshake)."""
    model = mb.models.double_pendulum()
    f = compiled(model)
    q, dq = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    full = f(q, dq, np.zeros(2), np.zeros(0))
    calls = []
    f._general = lambda *a, **k: calls.append((len(a), sorted(k))) or "general"
    for out in (f(q, dq), f(q, dq, np.zeros(2))):
        assert calls == [] and all(np.array_equal(out[k], full[k]) for k in full)
    assert np.allclose(full["M"], mb.crba(model, q), rtol=0, atol=1e-14)
    assert f(q, dq=dq) == "general" and f(np.tile(q, (3, 1)), dq) == "general" and f(q[:1], dq) == "general"
    assert f() == "general" and calls == [(1, ["dq"]), (2, []), (2, []), (0, [])]
    del f._general
    with pytest.raises(ValueError, match="q: contains NaN"):   # refused in C, as the general path refuses it
        f(np.array([np.nan, 0.0]), dq)
    with pytest.raises(TypeError, match="missing input 'q'"):
        f()


@needs_c_compiler
def test_one_state_and_batch_agree_on_starleth_through_every_entry():
    """StarlETH's M, b, g: one()'s one-wide kernel and the batch's CG_W-wide kernel, called every way a state
    reaches them (positional with defaults, all inputs, keywords, a batch whose size is not a multiple of the
    lanes), agree to rounding and with the core."""
    model = mb.models.starleth()
    f = compiled(model)
    rng = np.random.default_rng(4)
    Q, QD = rng.uniform(-1.5, 1.5, (2, 7, model.nv))
    batch = f(Q, QD)
    z = np.zeros(model.nv)
    for k in range(7):
        ways = (f(Q[k], QD[k]), f(Q[k], QD[k], np.zeros(f.sizes[2])), f(q=Q[k], dq=QD[k]),
                f._one(Q[k], QD[k], np.zeros(f.sizes[2]), np.zeros(0)))
        for out in ways:
            assert np.abs(out["M"] - batch["M"][k]).max() <= 1e-14 * np.abs(batch["M"][k]).max()
            assert np.abs(out["b"] - batch["b"][k]).max() <= 1e-14 * max(np.abs(batch["b"][k]).max(), 1.0)
        M = ways[0]["M"]
        assert np.abs(M - mb.crba(model, Q[k])).max() <= 1e-12 * np.abs(M).max()
        h = ways[0]["b"] + ways[0]["g"]
        assert np.abs(h - mb.rnea(model, Q[k], QD[k], z)).max() <= 1e-12 * np.abs(h).max()
