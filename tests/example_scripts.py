"""The scripts of the repository's examples/ folder, loaded as modules for the tests."""
import importlib.util
import pathlib
import sys
import types

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def scripts():
    """Paths of the runnable example scripts (not the shared helpers)."""
    return sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def load(path):
    if str(EXAMPLES) not in sys.path:      # the scripts import their helpers as ``_shared``
        sys.path.insert(0, str(EXAMPLES))
    name = path.stem if path.stem.startswith("_") else f"example_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod          # dataclasses look their module up while the script runs
    spec.loader.exec_module(mod)
    return mod


def namespace():
    """Every script's functions (and the shared helpers) in one namespace: ``ex.example1_pd_planar2r`` …"""
    ns = types.SimpleNamespace()
    for path in [EXAMPLES / "_shared.py", *scripts()]:
        mod = load(path)
        for k, v in vars(mod).items():
            if not k.startswith("__"):
                setattr(ns, k, v)
    import multibody.simulation.closed_loops as lib
    for k in lib.__all__:
        setattr(ns, k, getattr(lib, k))
    return ns
