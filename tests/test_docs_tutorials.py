"""Every tutorial in docs/ runs: its ```python blocks are executed in order, in one namespace, in a
temporary folder (so the files a tutorial writes land there)."""
import os
import re

import pytest

DOCS = os.path.join(os.path.dirname(__file__), "..", "docs", "tutorials")
TUTORIALS = sorted(f for f in os.listdir(DOCS) if f.endswith(".md"))
assert TUTORIALS, f"no tutorials found in {DOCS}"

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_every_seed_has_a_tutorial():
    assert {"double_pendulum.md", "pronue.md", "spatial_v2.md", "tmt.md"} <= set(TUTORIALS)


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_runs(name, tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    text = open(os.path.join(DOCS, name), encoding="utf-8").read()
    blocks = BLOCK.findall(text)
    assert blocks, f"{name}: no python blocks"
    monkeypatch.chdir(tmp_path)
    src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    namespace = {"__name__": f"tutorial_{name[:-3]}"}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"{name} block {k + 1}", "exec"), namespace)
        finally:
            plt.close("all")
    assert os.listdir(tmp_path), f"{name}: wrote nothing"
