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


def test_fd_gq_lives_in_dynamics_under_one_name():
    import multibody as mb
    import multibody.simulation.constraints as old
    from multibody.dynamics.fdgq import fd_gq
    assert mb.fd_gq is fd_gq and "fd_gq" not in old.__all__ and "FDgq" not in old.__all__
    assert mb.spatial_v2.FDgq is fd_gq


def test_mechanism_is_a_model_type_with_one_address():
    import multibody.models
    from multibody.model.mechanism import Mechanism
    assert Mechanism.__module__ == "multibody.model.mechanism" and not hasattr(multibody.models, "Mechanism")
