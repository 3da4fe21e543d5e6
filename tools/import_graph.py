"""The package's import graph between rooms (folders and top-level modules of ``multibody``).

Every ``.py`` under ``src/multibody`` is parsed with :mod:`ast`; every ``import`` and
``from … import`` counts, at module level and inside functions alike (a function-level import
is an arrow the same as any other: it only runs later).  A room is the first name under
``multibody`` (``model``, ``dynamics``, ``_checks``, …); an import of the package root itself
(``from .. import X`` with ``X`` no submodule) counts as an arrow to ``__init__``.

The floors, top to bottom, follow the pipeline describe → model → compute → act → look
(issue 32); an arrow may only run sideways within a room or down a floor:

    cli, bench, __main__, __init__  →  view  →  engine, simulation  →  codegen  →  models
    →  symbolic  →  dynamics, kinematics (and the faces sparse, mjcf, spatial_v2)  →  model
    →  spatial  →  _boundary, _io  →  _checks, errors  →  core (the compiled kernels and the
    one array gate, which import nothing of the package)

``spatial`` (rotations and spatial vectors, pure algebra) sits below ``model``: joints and
inertias are written in it.

Run ``python tools/import_graph.py`` to print the circles between rooms (strongly connected
groups of two or more rooms), every arrow running back up a floor with the files it comes from,
and the two counts; ``tests/test_architecture.py`` holds the line with the same functions.
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = "multibody"
ROOT = Path(__file__).resolve().parents[1] / "src" / PACKAGE

# floors, top to bottom; rooms on one floor may import each other (only a circle is flagged)
FLOORS = [
    ("cli", "bench", "validation", "__main__", "__init__"),
    ("view",),
    ("engine", "simulation"),
    ("codegen",),
    ("models",),
    ("symbolic",),
    ("dynamics", "kinematics", "sparse", "mjcf", "pinocchio", "spatial_v2"),
    ("model",),
    ("spatial",),
    ("_boundary", "_io"),
    ("_checks", "errors", "_extras"),
    ("core",),  # the compiled kernels and the one array gate: imports nothing of the package
]
FLOOR = {room: len(FLOORS) - i for i, rooms in enumerate(FLOORS) for room in rooms}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _exists(dotted: str) -> bool:
    """Whether ``multibody.a.b`` is a module or package of the source tree."""
    rel = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    return (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file()


def imports(root: Path = ROOT):
    """Yield (importing module, imported module, line) for every import of the package in the tree."""
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path)
        package = module if _is_package(path) else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                        yield module, alias.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    yield module, sub if _exists(sub) else target, node.lineno


def room(module: str) -> str:
    """The room of ``multibody.a.b``: ``a`` (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def room_graph(root: Path = ROOT):
    """{(room from, room to): [(module, imported module, line), …]} without arrows inside a room."""
    edges = defaultdict(list)
    for src, dst, line in imports(root):
        a, b = room(src), room(dst)
        if a != b:
            edges[a, b].append((src, dst, line))
    return dict(edges)


def circles(edges) -> list[list[str]]:
    """Strongly connected groups of two or more rooms (Tarjan), each sorted, the list sorted."""
    succ = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    nodes = sorted(set(succ) | {b for s in succ.values() for b in s})
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out)


def cycles(edges, group) -> list[list[str]]:
    """The elementary two- and three-room cycles inside one circle (for reading, not counting)."""
    g = set(group)
    found = []
    for (a, b) in edges:
        if a in g and b in g and a < b and (b, a) in edges:
            found.append([a, b, a])
    for (a, b) in edges:
        for (c, d) in edges:
            if c == b and d != a and (d, a) in edges and a < b and a < d and {a, b, d} <= g:
                found.append([a, b, d, a])
    return sorted(found)


def back_arrows(edges):
    """Arrows from a room to a room on a higher floor: {(from, to): [(module, imported, line), …]}."""
    unknown = sorted({r for e in edges for r in e if r not in FLOOR})
    if unknown:
        raise KeyError(f"rooms without a floor (add them to FLOORS): {unknown}")
    return {e: where for e, where in edges.items() if FLOOR[e[0]] < FLOOR[e[1]]}


def main(argv=None) -> int:
    edges = room_graph()
    groups = circles(edges)
    back = back_arrows(edges)
    print(f"{len(edges)} arrows between rooms; {len(groups)} circles; {len(back)} arrows back up a floor")
    for group in groups:
        print("\ncircle:", ", ".join(group))
        for cyc in cycles(edges, group):
            print("   ", " → ".join(cyc))
    if back:
        print("\narrows back up a floor:")
    for (a, b), where in sorted(back.items()):
        print(f"  {a} → {b}")
        for src, dst, line in sorted(set(where)):
            print(f"      {src}:{line} imports {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
