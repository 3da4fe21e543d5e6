"""A notebook shows a trajectory and a model inline (issue: first contact): the viewer page in an
iframe, no file written. The notebook is executed by a real Jupyter kernel (nbclient + ipykernel)."""
import os

import pytest

import ipykernel  # noqa: F401  (the kernel nbclient starts; test dependencies in pyproject's [test])
import nbclient
import nbformat

CELLS = [
    "import numpy as np, multibody as mb",
    "model = mb.models.double_pendulum()\ntraj = mb.simulate(model, [np.pi / 4, -np.pi / 4], [0, 0], 1.0)\ntraj",
    "model",
    "mb.view.show(model, title='shown inline')",
    "import os; sorted(os.listdir('.'))",
]


@pytest.mark.slow
def test_a_notebook_displays_a_trajectory_and_a_model_inline(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    html = []
    for cell in nb.cells[1:4]:
        outs = [o for o in cell.outputs if o.get("output_type") == "execute_result"]
        assert outs, cell.source
        html.append(outs[0]["data"].get("text/html", ""))
    for text in html:
        assert text.startswith("<iframe srcdoc=") and "sm-data" in text
    assert "double pendulum" in html[0] or "double_pendulum" in html[0]
    assert "shown inline" in html[2]
    listing = nb.cells[4].outputs[0]["data"]["text/plain"]
    assert listing == "[]"                      # nothing was written beside the notebook
    assert not os.listdir(tmp_path)
