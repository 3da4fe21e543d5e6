"""bench.pinocchio_cpp: the C harness of our kernels and the C++ harness of Pinocchio's compute the same
numbers (a correctness handshake before any timing is read; no timing is asserted)."""
import os
import shutil

import numpy as np
import pytest

from multibody.bench import pinocchio_cpp as bench

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.slow


# The first run compiles both harnesses (the C++ one takes minutes); later runs find them in the cache
# (bench.pinocchio_cpp.cache_dir), keyed by the sources' hash.
def _need(built):
    exe, why = built
    if exe is None:  # a machine without a compiler or headers: the benchmark says so in one line
        pytest.skip(why)
    return exe


def test_the_c_harness_and_pinocchios_cpp_agree_on_a_branched_floating_robot(tmp_path):
    _need(bench.build_ours())
    _need(bench.build_pinocchio())
    lines = []
    rows = bench.run(robots=["Talos"], states=6, calls=3, repeat=1, count=0, out=lines.append,
                     keep=str(tmp_path))
    assert [r["kernel"] for r in rows] == list(bench.KERNELS)
    for r in rows:
        # every output of every kernel (τ, H, q̈, M⁻¹, the derivative matrices) on 4 states; Talos: Pinocchio
        # orders its joints depth-first, we in the file's order, so the comparison maps a real permutation
        assert r["rel_diff"] < 1e-10, (r["kernel"], r["diff"])
        assert r["checksum_ours"] == pytest.approx(r["checksum_pin"], rel=1e-10), r["kernel"]
        assert r["checksum_ours"] > 0 and r["c_ours"] > 0 and r["cpp_pin"] > 0
    # the files the comparison read hold real numbers of the right size (38 dof: 3 × 38² per derivative)
    assert np.fromfile(tmp_path / "ours_aba_derivatives.bin").size == 4 * 3 * 38 * 38
    assert any(line.startswith("agreement of the C harness") for line in lines)


def test_a_missing_compiler_is_one_line_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setenv("MULTIBODY_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    exe, why = bench.build_pinocchio()
    assert exe is None and "C++ harness compile failed" in why and "no-such-compiler" in why
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("CXX", raising=False)
    assert bench.build_ours() == (None, "no C compiler (gcc or $CC)")
    assert bench.build_pinocchio() == (None, "no C++ compiler (g++ or $CXX)")
