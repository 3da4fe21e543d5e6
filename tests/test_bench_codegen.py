"""bench.codegen's right-hand-side part as its command runs it: ours and PyDy's agree before
anything is timed (the timings themselves are not asserted)."""
import re
import shutil

import pytest

from multibody.bench import codegen as bench


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="needs a C compiler")
def test_bench_rhs_agrees_with_pydy(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MULTIBODY_CACHE_DIR", str(tmp_path))
    bench.bench_rhs(3, 64)
    out = capsys.readouterr().out
    agree = re.search(r"agreement with PyDy: ([0-9.e+-]+)", out)
    assert agree is not None, out
    assert float(agree.group(1)) <= 1e-10
    assert re.search(r"one call: ours +[0-9.]+ µs", out)
