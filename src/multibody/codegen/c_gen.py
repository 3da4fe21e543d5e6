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
from .spec import TEMP_PREFIX, CodeSpec

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


class _LanePrinter(Printer):
    """The C printer for :func:`c_lanes_function`: every value is a ``cg_vd`` (CG_W states side
    by side), so functions are the lane-wise ``cg_v*`` of ``templates/module.c``."""

    def __init__(self, names: dict):
        super().__init__(names, "c")
        self.scalar = Printer(names, "c")       # constants stay doubles (they broadcast in + - * /)
        self.funcs = {k: "cg_v" + v for k, v in self.funcs.items()}
        self.sqrt = "cg_vsqrt"
        self.pow = "cg_vpow"

    def expr(self, e, prec: int = 0) -> str:
        if not e.free_symbols:
            return self.scalar.expr(e, prec)
        t = type(e).__name__
        if t in self.funcs or (t == "Pow" and not _small_power(e)):
            # a lane-wise function takes vectors only: a constant argument is splat
            args = [self.expr(a) if a.free_symbols else f"cg_splat({self.scalar.expr(a)})" for a in e.args]
            if t == "Pow":
                return f"{self.pow}({', '.join(args)})"
            return f"{self.funcs[t]}({', '.join(args)})"
        return super().expr(e, prec)


def _small_power(e) -> bool:
    """True for the powers Printer writes without a call: x**k (|k| <= 4), x**(1/2), x**(-1/2)."""
    try:
        x = float(e.args[1])
    except (TypeError, RuntimeError, ValueError):
        return False
    return (x == int(x) and 1 <= abs(x) <= 4) or x in (0.5, -0.5)


def _sincos_pair(a, b) -> bool:
    """True when a and b are sin and cos (either order) of one argument that depends on an input."""
    names = {type(a).__name__, type(b).__name__}
    return names == {"sin", "cos"} and a.args[0] == b.args[0] and bool(a.args[0].free_symbols)


def _sincos_adjacent(temps):
    """The temporaries with cos(x) moved next to sin(x) (or sin next to cos), the later one up to
    the earlier: it depends only on x, which the earlier one needs too, so the order stays a
    dependency order, and the lanes compute both with one reduction (cg_vsincos)."""
    first = {}
    partner = {}
    for k, (_, e) in enumerate(temps):
        t = type(e).__name__
        if t in ("sin", "cos") and e.args[0].free_symbols:
            key = e.args[0]
            if key in first and type(temps[first[key]][1]).__name__ != t and first[key] not in partner:
                partner[first[key]] = k
            else:
                first.setdefault(key, k)
    if not partner:
        return list(temps)
    moved = set(partner.values())
    order = []
    for k in range(len(temps)):
        if k in moved:
            continue
        order.append(temps[k])
        if k in partner:
            order.append(temps[partner[k]])
    return order


def c_lanes_function(spec: CodeSpec, func_name: str = "cg_eval_lanes") -> str:
    """Text of ``static void <func_name>(const double *const *cg_p, double *const *cg_o)``: the
    spec's code evaluated for ``CG_W`` states at once (CSE applied).

    Why lanes: the compiled batch evaluates many states of one straight-line program, so the
    states, not the expressions, are the parallel dimension: every temporary is a ``cg_vd`` (GCC/
    Clang vector extension, ``CG_W`` doubles; plain ``double`` elsewhere, see ``templates/module.c``),
    each operation one SIMD instruction for ``CG_W`` states, and sin/cos a polynomial on the lanes
    (``cg_vsin``, ``cg_vcos``) instead of ``CG_W`` library calls. ``cg_p[i * CG_W + l]`` points at
    input ``i`` of lane ``l``'s state, ``cg_o[j * CG_W + l]`` at its output ``j``; lanes may share an
    output (a batch's last block points spare lanes at a real state's arrays: equal values written
    twice by one thread). The module's ``one()`` runs the same text compiled with ``CG_W`` = 1.

    Long code is cut into ``CG_NOINLINE`` parts of :data:`CHUNK` temporaries (one huge basic block
    makes the compiler's register allocation superlinear). A temporary used only inside its part is
    a local the compiler keeps in a register; only values a later part reads go through the
    workspace ``cg_w``, whose slots are reused once their last reader's part has run, and each
    output entry is written by the part that computes its last operand. So the workspace holds
    what is live across parts, not every temporary: it stays in the L1 cache (Talos' ABA has 4 481
    temporaries, 140 kB as lanes; a few kB are live across any cut).
    """
    spec.cse()
    names, gathers = {}, []
    used = set()
    for _, e in spec.temporaries:
        used |= set(e.free_symbols)
    for _, _, ex in spec.reduced:
        for e in ex:
            used |= set(e.free_symbols)
    for i, (nm, syms) in enumerate(spec.inputs):
        for k, s in enumerate(syms):
            if s in used:
                names[s] = f"cg_x[{len(gathers)}]"
                gathers.append((i, k, f"{nm}[{k}]"))
    temps = _sincos_adjacent(spec.temporaries)
    index = {t: k for k, (t, _) in enumerate(temps)}
    nparts = max((len(temps) + CHUNK - 1) // CHUNK, 1)
    part_of = lambda k: k // CHUNK  # noqa: E731
    last_part = [part_of(k) for k in range(len(temps))]      # the last part that reads temporary k
    for k, (_, e) in enumerate(temps):
        for s in e.free_symbols:
            j = index.get(s)
            if j is not None:
                last_part[j] = max(last_part[j], part_of(k))
    writes = [[] for _ in range(nparts)]                      # output entries, by the part that writes them
    for j, (nm, (r, c), ex) in enumerate(spec.reduced):
        for k, e in enumerate(ex):
            if e == 0:
                continue
            deps = [index[s] for s in e.free_symbols if s in index]
            part = part_of(max(deps)) if deps else 0
            writes[part].append((j, k, e))
            for d in deps:
                last_part[d] = max(last_part[d], part)
    # workspace slots for values read by a later part; a slot is free again after its last reader's part
    slot, free, releasing, nslots = {}, [], {}, 0
    for k in range(len(temps)):
        p = part_of(k)
        if k % CHUNK == 0:
            free.extend(releasing.pop(p - 1, []))
        if last_part[k] > p:
            if free:
                slot[k] = free.pop()
            else:
                slot[k] = nslots
                nslots += 1
            releasing.setdefault(last_part[k], []).append(slot[k])

    def part_body(p):
        local = dict(names)
        for k in range(p * CHUNK):
            if k in slot and last_part[k] >= p:
                local[temps[k][0]] = f"cg_w[{slot[k]}]"
        for k in range(p * CHUNK, min((p + 1) * CHUNK, len(temps))):
            local[temps[k][0]] = f"{TEMP_PREFIX}{k}"
        pr = _LanePrinter(local)

        def value(e):
            text = pr(e)
            return text if e.free_symbols else f"cg_splat({text})"   # a constant: the same on every lane

        body = []
        end = min((p + 1) * CHUNK, len(temps))
        paired = False
        for k in range(p * CHUNK, end):
            if paired:                     # the cos (or sin) its neighbour's cg_vsincos wrote
                paired = False
            elif k + 1 < end and _sincos_pair(temps[k][1], temps[k + 1][1]):
                # sin and cos of one argument share the reduction: one cg_vsincos for both
                sk, ck = (k, k + 1) if type(temps[k][1]).__name__ == "sin" else (k + 1, k)
                body.append(f"    cg_vd {TEMP_PREFIX}{k}, {TEMP_PREFIX}{k + 1};")
                body.append(f"    cg_vsincos({pr(temps[k][1].args[0])}, &{TEMP_PREFIX}{sk}, &{TEMP_PREFIX}{ck});")
                paired = True
            else:
                body.append(f"    const cg_vd {TEMP_PREFIX}{k} = {value(temps[k][1])};")
            if k in slot:
                body.append(f"    cg_w[{slot[k]}] = {TEMP_PREFIX}{k};")
            if paired and k + 1 in slot:
                body.append(f"    cg_w[{slot[k + 1]}] = {TEMP_PREFIX}{k + 1};")
        for j, k, e in writes[p]:
            body.append(f"    cg_scatter(cg_o + {j} * CG_W, {k}, {value(e)});  /* {spec.reduced[j][0]}[{k}] */")
        return body

    nx = max(len(gathers), 1)
    lines = []
    if nparts > 1:
        for p in range(nparts):
            lines.append(f"static CG_NOINLINE void {func_name}_part{p}(const cg_vd *restrict cg_x, "
                         "cg_vd *restrict cg_w, double *const *cg_o)")
            lines.append("{")
            lines += ["    (void)cg_x;", "    (void)cg_w;", "    (void)cg_o;"]
            lines += part_body(p)
            lines.append("}")
            lines.append("")
    lines += [f"static void {func_name}(const double *const *cg_p, double *const *cg_o)", "{",
              f"    cg_vd cg_x[{nx}];"]
    lines.append(f"    /* inputs, lane by lane: {len(gathers)} used */")
    for k, (i, idx, what) in enumerate(gathers):
        lines.append(f"    cg_x[{k}] = cg_gather(cg_p + {i} * CG_W, {idx});  /* {what} */")
    lines.append("    /* structural zeros of the outputs: a few as stores, many by memset (measured: StarlETH's batch")
    lines.append("     * 0.79 -> 0.68-0.75 us/state with b and g's memset gone, slower with M's 132 zeros as stores) */")
    for j, (nm, (r, c), ex) in enumerate(spec.reduced):
        zeros = [k for k, e in enumerate(ex) if e == 0]
        if len(zeros) * 4 > len(ex):     # StarlETH: b, g as stores, M (132 of 324 zero) by memset
            lines.append(f"    cg_zero(cg_o + {j} * CG_W, {r * c});  /* {nm} */")
            continue
        for k in zeros:
            lines.append(f"    cg_scatter(cg_o + {j} * CG_W, {k}, cg_splat(0.0));  /* {nm}[{k}] */")
    lines.append(f"    /* {len(temps)} common subexpressions, {nparts} part(s), {nslots} values live across parts */")
    if nparts > 1:
        lines.append(f"    cg_vd cg_w[{max(nslots, 1)}];")
        for p in range(nparts):
            lines.append(f"    {func_name}_part{p}(cg_x, cg_w, cg_o);")
    else:
        lines += part_body(0)
    lines.append("}")
    return "\n".join(lines) + "\n"
