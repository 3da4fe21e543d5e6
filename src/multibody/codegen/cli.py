"""``multibody codegen MODEL --lang numpy|c|compiled|matlab|mex --out DIR`` (hook for ``multibody.cli``).

MODEL is a built-in model (``starleth``, ``ra3link``, ``double_pendulum``, ``planar:3``,
``auto_tree:5``, ``biped_upper_body`` …, arguments after a colon), a saved
``EquationsOfMotion`` file (``.json``, from ``eom.save``) or a URDF file (traced algorithm, see
``--algorithm``). A progress bar (tqdm, on stderr) follows the stages.
"""
from __future__ import annotations

import os
import sys
import time

__all__ = ["add_parser", "run", "resolve_model"]

LANGS = ("numpy", "c", "compiled", "matlab", "mex")


def add_parser(subparsers):
    """Register the ``codegen`` subcommand on an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "codegen", help="generate NumPy, C, compiled, MATLAB or MEX code of a model's equations of motion",
        description="Generate code of M, b, g, f = Sᵀτ (or of a traced algorithm for a URDF robot).")
    p.add_argument("model", metavar="MODEL",
                   help="built-in model name (e.g. starleth, ra3link, double_pendulum, planar:3, auto_tree:5), "
                        "an EquationsOfMotion .json file, or a .urdf file")
    p.add_argument("--lang", choices=LANGS, default="c", help="numpy: a .py module; c: .c/.h and main.c; "
                   "compiled: a cached CPython extension (copied into --out); matlab: proNEu-style function "
                   "files PREFIX_Mfunc.m, PREFIX_bfunc.m, … (MATLAB or GNU Octave); mex: the same functions as C "
                   "MEX sources PREFIX_Mfunc_mex.c, … (mex FILE.c, or mkoctfile --mex FILE.c)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--prefix", default="eom", help="file and function prefix (default: eom)")
    p.add_argument("--algorithm", choices=("rnea", "crba", "aba"), default=None,
                   help="trace this numeric algorithm over the model instead of using symbolic equations "
                        "(the default for URDF files: aba)")
    p.add_argument("--floating", action="store_true", help="URDF: add a free-floating base")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def resolve_model(text: str):
    """The object a MODEL argument names (a Model, a proNEu/TMT system or EquationsOfMotion)."""
    if os.path.isfile(text):
        if text.lower().endswith(".urdf"):
            return ("urdf", text)
        from ..symbolic.eom import EquationsOfMotion

        return EquationsOfMotion.load(text)
    from ..models.catalogue import build

    obj = build(text)     # the command line's one table of built-in models (UnknownModel otherwise)
    if isinstance(obj, tuple) and obj and hasattr(obj[0], "jtype"):  # (model, (q, dq, params, values))
        model, extra = obj
        from ..symbolic import derive

        eom = derive(model)
        eom.extra.setdefault("model", getattr(model, "name", text))
        values = extra[3] if len(extra) > 3 else None
        return (eom, values)
    return obj


class _Progress:
    def __init__(self, total, enabled):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, file=sys.stderr, bar_format="{desc:<48}{bar}| {elapsed}",
                                leave=True)
            except ImportError:  # pragma: no cover - tqdm is a dependency
                self.bar = None

    def __call__(self, msg):
        if self.bar is not None:
            self.bar.set_description_str(msg[:48])
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.n = self.bar.total
            self.bar.refresh()
            self.bar.close()
            self.bar = None


def run(args) -> int:
    """Execute ``multibody codegen`` for parsed ``args``; returns the exit status."""
    from ..errors import EXIT_ERROR, EXIT_USAGE, fail
    from ..models.catalogue import UnknownModel
    from . import api, c_gen, cache, matlab_gen, mex_gen, numpy_gen

    say = _Progress(total=5, enabled=not getattr(args, "no_progress", False))
    t0 = time.perf_counter()
    try:
        say(f"loading {args.model}")
        obj = resolve_model(args.model)
        values = None
        if isinstance(obj, tuple) and obj and obj[0] == "urdf":
            from ..model.urdf import load_urdf

            obj = load_urdf(obj[1], floating=args.floating)
            algorithm = args.algorithm or "aba"
        else:
            algorithm = args.algorithm
            if isinstance(obj, tuple):
                obj, values = obj
        if algorithm:
            from .trace import trace_algorithm

            say(f"tracing {algorithm}")
            spec = trace_algorithm(obj, algorithm, name=args.prefix)
        else:
            say("deriving the equations of motion")
            spec = api.as_spec(obj, values=values, name=args.prefix)
        say("common-subexpression elimination")
        spec.cse()
        os.makedirs(args.out, exist_ok=True)
        say(f"writing {args.lang}")
        if args.lang == "numpy":
            fn = numpy_gen.NumpyFunction(spec)
            path = os.path.join(args.out, f"{args.prefix}.py")
            cache.atomic_write(path, fn.source.encode())
            written = [path]
        elif args.lang == "c":
            files = c_gen.to_c(spec, args.out, prefix=args.prefix)
            written = list(files.values())
        elif args.lang == "matlab":
            mfiles = matlab_gen.to_matlab(spec, args.out, prefix=args.prefix)
            written = list(mfiles.values())
        elif args.lang == "mex":
            mfiles = mex_gen.to_mex(spec, args.out, prefix=args.prefix)
            written = list(mfiles.values())
        else:
            from .compiled import export

            dest = export(spec, args.out, args.prefix)   # importable as `import <prefix>` from --out
            written = [dest, f"(import {args.prefix}: {args.prefix}.one(q, dq, …) or {args.prefix}.run(n, in0, "
                             "stride0, …, out0, …))"]
    except UnknownModel as exc:      # the one error line and exit statuses of `multibody`
        return fail("codegen", exc, EXIT_USAGE)
    except (ValueError, TypeError, cache.CompilerNotFoundError, RuntimeError, OSError) as exc:
        return fail("codegen", exc, EXIT_ERROR)
    finally:
        say.close()
    ops = spec.count_ops()
    print(f"{spec.info.get('model', args.model)}: {', '.join(spec.output_names())} — {len(spec.temporaries)} "
          f"temporaries, {ops} operations after CSE, {time.perf_counter() - t0:.2f} s")
    for w in written:
        print(f"  {w}")
    if args.lang == "c":
        print(f"build and self-check: cd {args.out} && gcc *.c -o {args.prefix} -lm && ./{args.prefix}")
    elif args.lang == "matlab":
        calls = "; ".join(f"{o} = {mfiles.functions[o]}({', '.join(a)})" for o, a in mfiles.args.items())
        print(f"in MATLAB or Octave, in {args.out}: {calls}")
    elif args.lang == "mex":
        sources = " ".join(os.path.basename(p) for k, p in mfiles.items() if p.endswith(".c"))
        calls = "; ".join(f"{o} = {mfiles.functions[o]}({', '.join(a)})" for o, a in mfiles.args.items())
        print(f"build, in {args.out}: for f in {sources}; do mkoctfile --mex $f; done   (MATLAB: mex FILE.c each)")
        print(f"then in MATLAB or Octave: {calls}")
    return 0
