"""The import graph holds the line: no new circle between rooms, no new arrow back up a floor.

The graph and the floors are computed by ``tools/import_graph.py`` (an ``ast`` walk of every
``.py`` of the package: module-level and function-level imports alike).  The arrows still kept
are listed below with their reason; the lists may only shrink.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("_import_graph", ROOT / "tools" / "import_graph.py")
graph = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("_import_graph", graph)
_spec.loader.exec_module(graph)

# arrows back up a floor still kept: (from room, to room) → reason.  None: the constraint descriptions
# are model data (model/constraints.py) evaluated and solved beside fd_gq (dynamics/constraints.py), and
# a Mechanism's symbolic side is in symbolic/tmt (tmt_system, mechanism_point, mechanism_rotation).
KEPT_BACK_ARROWS: dict = {}
# circles between rooms still kept (each a sorted tuple of rooms): none
KEPT_CIRCLES: set = set()


def test_checks_and_errors_import_only_the_compiled_core():
    """_checks and errors are leaves: below them is only the compiled core (the one array gate)."""
    edges = graph.room_graph()
    for leaf in ("_checks", "errors"):
        assert {b for a, b in edges if a == leaf} <= {"core"}, leaf


def test_every_room_has_a_floor():
    graph.back_arrows(graph.room_graph())  # KeyError names a room missing from FLOORS


def test_no_new_circle():
    found = {tuple(c) for c in graph.circles(graph.room_graph())}
    new = [c for c in found if not any(set(c) <= set(kept) for kept in KEPT_CIRCLES)]
    assert not new, f"new import circles: {sorted(new)}"


def test_no_new_arrow_back_up():
    found = graph.back_arrows(graph.room_graph())
    new = {e: w for e, w in found.items() if e not in KEPT_BACK_ARROWS}
    assert not new, "new arrows back up a floor: " + "; ".join(
        f"{a} → {b} ({', '.join(sorted({f'{s}:{n}' for s, _, n in w}))})" for (a, b), w in sorted(new.items()))


def test_kept_lists_are_current():
    """A fixed arrow leaves the lists, so that it cannot come back unnoticed."""
    edges = graph.room_graph()
    assert set(KEPT_BACK_ARROWS) <= set(graph.back_arrows(edges))
    assert KEPT_CIRCLES <= {tuple(c) for c in graph.circles(edges)}


def test_symbolic_core_and_utils_do_not_import_each_other_both_ways():
    """symbolic/utils (proNEu's utilities, user-facing) reads symbolic/_core, never the reverse."""
    pairs = {(a, b) for a, b, _ in graph.imports()}
    assert ("multibody.symbolic._core", "multibody.symbolic.utils") not in pairs


def test_nothing_in_the_library_below_bench_imports_bench():
    edges = graph.room_graph()
    assert {a for a, b in edges if b == "bench"} <= {"cli"}     # `multibody bench` forwards to it


def test_no_test_imports_bench():
    found = set()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "multibody.bench" or n.startswith("multibody.bench.") for n in names):
                found.add(path.name)
    assert not found, f"tests importing bench/ (run a benchmark as its command instead): {sorted(found)}"


def test_the_walk_of_a_model_through_simulate_touches_six_simulation_files():
    """A run of ``mb.simulate`` (a model with limits and damping, so the stops and passive laws are on
    its way) calls code in six files of ``simulation/``: core (simulate), events (its argument check),
    limits (the stops, friction's step), system (System and the Plan's factory), rollout (the Plan,
    the stepper table, the compiled loop's boundary) and trajectory (ARCHITECTURE.md's walk)."""
    import dataclasses
    import sys

    import numpy as np

    import multibody as mb
    model = dataclasses.replace(mb.models.double_pendulum(), q_lower=np.array([-2.0, -2.0]),
                                q_upper=np.array([2.0, 2.0]), damping=np.array([0.1, 0.1]))
    mb.simulate(model, [0.3, -0.2], [0.0, 0.0], 0.01)      # imports and first-use caches out of the way
    files = set()

    def profile(frame, event, arg):
        path = frame.f_code.co_filename.replace("\\", "/")
        if event == "call" and "/multibody/simulation/" in path:
            files.add(path.rsplit("/", 1)[1])
    sys.setprofile(profile)
    try:
        mb.simulate(model, [0.3, -0.2], [0.0, 0.0], 0.5)
    finally:
        sys.setprofile(None)
    assert files == {"core.py", "events.py", "limits.py", "system.py", "rollout.py", "trajectory.py"}
