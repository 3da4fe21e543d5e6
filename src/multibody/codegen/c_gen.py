"""``to_c``: C source of M, b, g, f with an example main (proNEu ``ccode``, ``genCCodeMatrix``,
``genCCodeExampleFile``, `000_…` §3.4.2).

As the seed warns, ``ccode`` omits zero entries, so the generated function first sets every
output array to zero; temporaries are ``const double`` (``genCCodeMatrix`` adds those
definitions); the caller names the arrays (``arrayname``). The example ``main.c`` fills the
model's default values (``values``: paramDef, qDef, dqDef, TDef), prints M, b, g (and f) and
compares them with reference values computed in Python when the code was generated, exiting
with status 1 if any entry differs by more than 1e-12 relative to the largest entry of its array.
"""
from __future__ import annotations

import os

import numpy as np
import symengine as se

from .printer import Printer, comment_text
from .spec import CodeSpec

__all__ = ["to_c", "c_function", "reference_state", "reference_values", "CFiles"]

#: relative tolerance of the example main's self-check
MAIN_RTOL = 1e-12


#: straight-line code longer than this many temporaries is split into separate functions: one
#: huge basic block makes the compiler's register allocation superlinear (minutes for Talos' ABA)
CHUNK = 200

_NOINLINE = ("#if defined(__GNUC__)\n#define CG_NOINLINE __attribute__((noinline))\n#else\n"
             "#define CG_NOINLINE\n#endif\n")


# The files also build as C++ (g++, as proNEu's manual compiles its generated C): C++ has no
# `restrict` keyword but GCC, Clang and MSVC have their own spelling; C linkage either way.
_CPLUSPLUS_OPEN = ("#ifdef __cplusplus\n#  if !defined(restrict)\n#    if defined(_MSC_VER)\n#      define restrict __restrict\n"
                   "#    else\n#      define restrict __restrict__\n#    endif\n#  endif\nextern \"C\" {\n#endif\n\n")
_CPLUSPLUS_CLOSE = "\n#ifdef __cplusplus\n}\n#endif\n"


def c_function(spec: CodeSpec, *, static: bool = False, func_name: str | None = None) -> str:
    """Text of ``void <name>_eval(const double *in…, double *out…)`` (CSE applied).

    Up to :data:`CHUNK` temporaries are ``const double`` locals; longer code keeps them in a
    workspace array ``cg_w`` on the stack, computed by ``CG_NOINLINE`` part functions of
    :data:`CHUNK` temporaries each.
    """
    spec.cse()
    names = {}
    for nm, syms in spec.inputs:
        for k, s in enumerate(syms):
            names[s] = f"{nm}[{k}]"
    temps = spec.temporaries
    chunked = len(temps) > CHUNK
    tnames = spec.temp_names()
    for k, (t, _) in enumerate(temps):
        names[t] = f"cg_w[{k}]" if chunked else tnames[t]
    pr = Printer(names, "c")
    fname = func_name or f"{spec.name}_eval"
    in_params = [f"const double *restrict {nm}" for nm in spec.input_names()]
    params = in_params + [f"double *restrict {nm}" for nm in spec.output_names()]
    lines = []
    if chunked:
        lines.append(_NOINLINE)
        nparts = (len(temps) + CHUNK - 1) // CHUNK
        for part in range(nparts):
            lines.append(f"static CG_NOINLINE void {fname}_part{part}({', '.join(in_params + ['double *restrict cg_w'])})")
            lines.append("{")
            for nm in spec.input_names():
                lines.append(f"    (void){nm};")
            for k in range(part * CHUNK, min((part + 1) * CHUNK, len(temps))):
                lines.append(f"    cg_w[{k}] = {pr(temps[k][1])};")
            lines.append("}")
            lines.append("")
    lines += [f"{'static ' if static else ''}void {fname}({', '.join(params)})", "{"]
    used_inputs = set()
    for _, e in temps:
        used_inputs |= {str(s) for s in e.free_symbols}
    for _, _, ex in spec.reduced:
        for e in ex:
            used_inputs |= {str(s) for s in e.free_symbols}
    for nm, syms in spec.inputs:
        if not any(str(s) in used_inputs for s in syms):
            lines.append(f"    (void){nm};  /* not used by these outputs */")
    lines.append("    int cg_k;")
    lines.append("    /* outputs start at zero: only non-zero entries are written below */")
    for nm, (r, c), _ in spec.reduced:
        lines.append(f"    for (cg_k = 0; cg_k < {r * c}; ++cg_k) {nm}[cg_k] = 0.0;")
    lines.append(f"    /* {len(temps)} common subexpressions */")
    if chunked:
        lines.append(f"    double cg_w[{len(temps)}];")
        for part in range(nparts):
            lines.append(f"    {fname}_part{part}({', '.join(spec.input_names() + ['cg_w'])});")
    else:
        for t, e in temps:
            lines.append(f"    const double {names[t]} = {pr(e)};")
    for nm, (r, c), ex in spec.reduced:
        lines.append(f"    /* {nm}: {r}x{c}, row-major */")
        for k, e in enumerate(ex):
            if e != 0:
                lines.append(f"    {nm}[{k}] = {pr(e)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def c_prototype(spec: CodeSpec) -> str:
    params = [f"const double *restrict {nm}" for nm in spec.input_names()]
    params += [f"double *restrict {nm}" for nm in spec.output_names()]
    return f"void {spec.name}_eval({', '.join(params)});"


def reference_state(spec: CodeSpec, seed: int = 2024) -> dict:
    """Deterministic input values for the example main: defaults, else uniform in [−1, 1]."""
    rng = np.random.default_rng(seed)
    out = {}
    for nm, syms in spec.inputs:
        if nm in spec.defaults:
            out[nm] = np.asarray(spec.defaults[nm], dtype=float)
        else:
            out[nm] = rng.uniform(-1.0, 1.0, len(syms))
    return out


def reference_values(spec: CodeSpec, state: dict) -> dict:
    """Outputs at ``state`` by SymEngine substitution of the original (un-CSE'd) expressions."""
    syms = [s for _, ss in spec.inputs for s in ss]
    vals = np.concatenate([np.asarray(state[nm], float) for nm in spec.input_names()]) if syms else np.zeros(0)
    if spec.tape:
        return _tape_reference(spec, dict(zip(syms, vals)))
    out = {}
    for nm, (r, c), ex in spec.outputs:
        if not ex:
            out[nm] = np.zeros((r, c))
            continue
        f = se.Lambdify(syms, list(ex), backend="lambda", cse=False) if syms else None
        v = np.asarray(f(vals), dtype=float).ravel() if f is not None else np.array([float(e) for e in ex])
        out[nm] = v.reshape(r, c)
    return out


def _evaluate(e, known: dict) -> float:
    free = list(e.free_symbols)
    if not free:
        return float(e)
    f = se.Lambdify(free, [e], backend="lambda", cse=False)
    return float(np.asarray(f(np.array([known[s] for s in free], dtype=float))).ravel()[0])


def _tape_reference(spec: CodeSpec, known: dict) -> dict:
    """Outputs of a traced spec: its recorded definitions evaluated one by one by SymEngine."""
    known = dict(known)
    for sym, e in spec.tape:
        known[sym] = _evaluate(e, known)
    return {nm: np.array([_evaluate(e, known) for e in ex], dtype=float).reshape(r, c)
            for nm, (r, c), ex in spec.outputs}


def _c_array(values) -> str:
    vals = [repr(float(v)) for v in np.asarray(values, float).ravel()]
    return "{" + ", ".join(vals or ["0.0"]) + "}"


def main_source(spec: CodeSpec, state: dict, ref: dict) -> str:
    """genCCodeExampleFile: fill default values, evaluate, print, compare with ``ref``."""
    header = f"{spec.name}.h"
    lines = ["/* Example program generated by multibody.codegen.to_c (proNEu genCCodeExampleFile).",
             f" * Build: gcc *.c -o {spec.name} -lm    Run: ./{spec.name}",
             f" * Evaluates {', '.join(spec.output_names())} at the values below, prints them and compares",
             f" * them with the values computed in Python at generation time (exit status 1 if any entry",
             f" * differs by more than {MAIN_RTOL:g} times the largest entry of its array). */",
             "#include <math.h>", "#include <stdio.h>", f'#include "{header}"', ""]
    for nm, syms in spec.inputs:
        names = comment_text(", ".join(str(s) for s in syms[:12])) + (", ..." if len(syms) > 12 else "")
        lines.append(f"/* {nm}: {names} */")
        lines.append(f"static const double {nm}[{max(len(syms), 1)}] = {_c_array(state[nm])};")
    for nm, (r, c), _ in spec.outputs:
        lines.append(f"static const double cg_ref_{nm}[{max(r * c, 1)}] = {_c_array(ref[nm])};")
    lines += ["",
              "static int cg_check(const char *cg_name, const double *cg_x, const double *cg_ref, int cg_rows, "
              "int cg_cols)",
              "{",
              "    int cg_i, cg_j, cg_bad = 0;",
              "    double cg_scale = 1e-300;",
              "    for (cg_i = 0; cg_i < cg_rows * cg_cols; ++cg_i)",
              "        if (fabs(cg_ref[cg_i]) > cg_scale) cg_scale = fabs(cg_ref[cg_i]);",
              '    printf("%s (%d x %d) =\\n", cg_name, cg_rows, cg_cols);',
              "    for (cg_i = 0; cg_i < cg_rows; ++cg_i) {",
              "        for (cg_j = 0; cg_j < cg_cols; ++cg_j) {",
              "            double cg_v = cg_x[cg_i * cg_cols + cg_j];",
              '            printf(" % .17g", cg_v);',
              f"            if (!(fabs(cg_v - cg_ref[cg_i * cg_cols + cg_j]) <= {MAIN_RTOL!r} * cg_scale)) cg_bad = 1;",
              "        }",
              '        printf("\\n");',
              "    }",
              '    if (cg_bad) printf("%s DIFFERS from the reference values\\n", cg_name);',
              "    return cg_bad;",
              "}",
              "",
              "int main(void)",
              "{",
              "    int cg_bad = 0;"]
    for nm, (r, c), _ in spec.outputs:
        lines.append(f"    double cg_out_{nm}[{max(r * c, 1)}];")
    args = spec.input_names() + [f"cg_out_{nm}" for nm in spec.output_names()]
    lines.append(f"    {spec.name}_eval({', '.join(args)});")
    for nm, (r, c), _ in spec.outputs:
        lines.append(f'    cg_bad |= cg_check("{nm}", cg_out_{nm}, cg_ref_{nm}, {r}, {c});')
    lines += ['    printf(cg_bad ? "FAILED: differs from the reference\\n" : "OK: matches the reference\\n");',
              "    return cg_bad;", "}"]
    return "\n".join(lines) + "\n"


class CFiles(dict):
    """{role: path} of the written files (``"c"``, ``"h"``, ``"main"``), plus the reference data."""

    state: dict
    reference: dict


def to_c(source, out_dir, prefix: str = "eom", arrays: dict | None = None, *, values: dict | None = None,
         main: bool = True) -> CFiles:
    """Write C source ``<prefix>.c``, ``<prefix>.h`` and an example ``main.c`` into ``out_dir``.

    The function is ``void <prefix>_eval(inputs..., outputs...)``: one ``const double *`` per
    input array (``q``, ``dq``, ``tau``, ``param``), one ``double *restrict`` per output (``M``
    row-major n×n, ``b``, ``g``, ``f``; zeroed, then written). ``main.c`` evaluates one reference
    state and compares with values computed here, so ``gcc *.c -o <prefix> -lm`` in ``out_dir``
    builds a program that checks itself.

    Parameters
    ----------
    source : Model, EquationsOfMotion, Mechanism, TMTSystem, PneSystem or CodeSpec
        What to generate code for (anything :func:`as_spec` accepts). A model is derived
        symbolically first (``multibody.symbolic.derive``; seconds for a few bodies).
    out_dir : str or os.PathLike
        Folder to write into; created if missing.
    prefix : str, optional
        File stem and function-name prefix (a C identifier; default ``"eom"``).
    arrays : dict, optional
        New names for the input and output arrays, e.g. ``{"M": "MpNE", "q": "x"}``; every name
        must be a distinct identifier that is not a keyword of the target language.
    values : dict, optional
        Default parameter values, {parameter symbol or name: number}, for equations that keep
        symbolic parameters (they become the ``param`` input's default). A built-in
        ``symbolic=True`` model brings its own; must be None for a ``CodeSpec``.
    main : bool, optional
        Also write ``main.c`` (default True).

    Returns
    -------
    CFiles
        Dict mapping ``"c"``, ``"h"``, ``"main"`` to the paths written; ``.state`` and ``.reference`` hold the input
        state and the output values ``main.c`` checks (None without ``main``).

    Raises
    ------
    TypeError
        ``source`` is none of the accepted kinds (the message lists them), or ``values`` is given
        with a ``CodeSpec``.
        Also ``out_dir`` that is not a path.
    ValueError
        ``prefix`` or a name in ``arrays`` is not a valid C identifier, is reserved or clashes.
    FileExistsError
        ``out_dir`` exists and is a file.

    Examples
    --------
    >>> import os, tempfile, multibody as mb
    >>> from multibody import codegen
    >>> d = tempfile.mkdtemp()
    >>> files = codegen.to_c(mb.models.double_pendulum(), d, arrays={"M": "MpNE"})
    >>> sorted(os.path.basename(p) for p in files.values())
    ['eom.c', 'eom.h', 'main.c']
    >>> "double *restrict MpNE" in open(files["h"]).read()
    True
    """
    from .api import as_spec
    from .cache import atomic_write, output_folder

    spec = as_spec(source, values=values, name=prefix).renamed(arrays, name=prefix)
    out_dir = output_folder(out_dir)
    guard = f"{prefix.upper()}_H"
    sizes = "\n".join(f"#define {prefix.upper()}_SIZE_{nm} {len(s)}" for nm, s in spec.inputs)
    sizes += "\n" + "\n".join(f"#define {prefix.upper()}_SIZE_{nm} {r * c}  /* {r} x {c}, row-major */"
                              for nm, (r, c), _ in spec.outputs)
    desc = comment_text(spec.info.get("model", prefix))
    h = (f"/* Generated by multibody.codegen.to_c: {', '.join(spec.output_names())} of {desc}. */\n"
         f"#ifndef {guard}\n#define {guard}\n\n{sizes}\n\n{_CPLUSPLUS_OPEN}"
         f"/* Inputs: {', '.join(spec.input_names())}; outputs (written, zeroed first): "
         f"{', '.join(spec.output_names())}. */\n{c_prototype(spec)}\n{_CPLUSPLUS_CLOSE}\n#endif\n")
    c = (f"/* Generated by multibody.codegen.to_c: {', '.join(spec.output_names())} of {desc}. */\n"
         f'#include <math.h>\n#include "{prefix}.h"\n\n' + c_function(spec))
    files = CFiles()
    files["c"] = os.path.join(out_dir, f"{prefix}.c")
    files["h"] = os.path.join(out_dir, f"{prefix}.h")
    atomic_write(files["c"], c.encode())
    atomic_write(files["h"], h.encode())
    if main:
        state = reference_state(spec)
        ref = reference_values(spec, state)
        files["main"] = os.path.join(out_dir, "main.c")
        atomic_write(files["main"], main_source(spec, state, ref).encode())
        files.state, files.reference = state, ref
    return files
