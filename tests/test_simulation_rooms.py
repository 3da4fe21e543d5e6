"""The simulation package's import structure: no circle, and no import of the model catalogue."""
import ast
import pathlib

import multibody

SIM = pathlib.Path(multibody.__file__).parent / "simulation"


def _imports(path):
    """Sibling modules of simulation/ that ``path`` imports (at module level or inside functions)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                for a in node.names:
                    out.add(a.name if (SIM / f"{a.name}.py").exists() else "__init__")
    return out


def test_no_import_circle_in_simulation():
    graph = {p.stem: _imports(p) for p in SIM.glob("*.py")}
    graph["__init__"] = set()          # the package imports its modules; they may not import it back in a circle

    def visit(node, path):
        for nxt in graph.get(node, ()):
            assert nxt not in path, f"import circle: {' -> '.join(path + [nxt])}"
            visit(nxt, path + [nxt])

    for start in graph:
        visit(start, [start])


def test_rollout_imports_only_the_controllers():
    assert _imports(SIM / "rollout.py") <= {"controllers"}


def test_fd_gq_lives_in_dynamics_and_keeps_its_old_address():
    import multibody as mb
    from multibody.dynamics.fdgq import fd_gq
    from multibody.simulation.constraints import fd_gq as old
    assert mb.fd_gq is fd_gq and old is fd_gq
    assert mb.spatial_v2.FDgq is fd_gq


def test_mechanism_is_a_model_type_and_keeps_its_old_address():
    from multibody.model.mechanism import Mechanism
    from multibody.models import Mechanism as old
    from multibody.models.mechanism import Mechanism as older
    assert Mechanism is old is older and Mechanism.__module__ == "multibody.model.mechanism"
