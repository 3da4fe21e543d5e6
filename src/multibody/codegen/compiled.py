"""``compile``: a CPython extension built with the system C compiler, cached on disk (proNEu
``emlc``: "mex-functions are executed much faster … for systems with a lot of degrees of freedom").

The module holds the code ``to_c`` writes in its lanes form (:func:`~multibody.codegen.c_gen.c_lanes_function`:
CG_W states per SIMD block, four with AVX; ``one`` runs the same kernel compiled one state wide). It is compiled
-O3 and, where the compiler takes it, ``-march=native`` (the machine's CPU is in the cache key).
One call evaluates N states in one C loop, no Python per state: the inputs
pass the C core's one array gate (``multibody/csrc/common/gate.h``, #included with ``-I`` to
the installed package's C tree: the same rules as ``mb.rnea``), sizes and finiteness are checked in C, the
loop runs with the GIL released, and a result that overflowed raises ``ResultOverflowError``.
Inputs without a batch dimension (the parameters, usually) are shared by all states through a
zero stride.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import string
import subprocess
import tempfile
import time
import warnings
from importlib import resources

import numpy as np

from .._io import package_version
from ..core._core import gate as _gate
from . import cache as K
from .c_gen import c_lanes_function
from .printer import comment_text
from .function import GeneratedFunction
from .spec import CodeSpec

__all__ = ["compile", "CompiledFunction", "module_source"]

_LOADED: dict = {}   # cache key -> extension module (per process)
_TEMPLATE: list = []  # the parsed templates/module.c, read on first use


def core_include() -> str:
    """The C tree of the package (``csrc/``, package data): the include folder of both extensions,
    where ``common/gate.h``, the array gate generated modules share, lies."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc")


def gate_header() -> str:
    """The text of ``common/gate.h``; part of the cache key, so a changed gate rebuilds the modules."""
    with open(os.path.join(core_include(), "common", "gate.h"), encoding="utf-8") as fh:
        return fh.read()


def _module_template() -> string.Template:
    """``templates/module.c`` (package data): the extension module around ``cg_eval``, with
    ``${name}`` placeholders."""
    if not _TEMPLATE:
        text = resources.files(__package__).joinpath("templates", "module.c").read_text(encoding="utf-8")
        _TEMPLATE.append(string.Template(text))
    return _TEMPLATE[0]


def module_source(spec: CodeSpec, modname: str) -> str:
    """C source of the extension module ``modname`` around ``<spec.name>_eval``: ``templates/module.c``
    with its placeholders filled in one pass (``string.Template.substitute``: an inserted text is
    never read again for placeholders, and a placeholder left unfilled is an error).  The one free
    text, the model's name, passes through :func:`comment_text` first."""
    nin, nout = len(spec.inputs), len(spec.outputs)
    in_sizes = [len(s) for _, s in spec.inputs]
    out_sizes = [r * c for _, (r, c), _ in spec.outputs]
    quoted = lambda names: ", ".join(f'"{n}"' for n in names)  # noqa: E731
    listed = lambda values: ", ".join(map(str, values)) or "0"  # noqa: E731
    return _module_template().substitute(
        modname=modname,
        outputs=", ".join(spec.output_names()),
        model=comment_text(spec.info.get("model", spec.name)),
        kernel=c_lanes_function(spec),
        nin=nin, nout=nout,
        in_names=quoted(spec.input_names()), in_sizes=listed(in_sizes),
        out_names=quoted(spec.output_names()), out_sizes=listed(out_sizes),
        out_ndim=listed("1" if spec.is_vector(nm) else "2" for nm in spec.output_names()),
        out_rows=listed(r for _, (r, c), _ in spec.outputs),
        out_cols=listed(c for _, (r, c), _ in spec.outputs))


def _load(modname: str, path: str):
    loader = importlib.machinery.ExtensionFileLoader(modname, path)
    spec = importlib.util.spec_from_file_location(modname, path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


_PROCESS_WIDE_MATH_FLAGS = frozenset({"-ffast-math", "-Ofast", "-funsafe-math-optimizations"})


def _run_compiler(cmds: list) -> None:
    """Run the compiler commands side by side (the module's two parts) and wait for all of them;
    the first that failed raises with its last lines of output."""
    procs = []
    try:
        for cmd in cmds:
            procs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    except OSError as exc:
        for _, p in procs:
            p.kill()
            p.communicate()
        raise K.CompilerNotFoundError(f"could not run the C compiler {cmds[0][0]!r} ({exc}); "
                                      "use multibody.codegen.to_numpy(...), which needs no compiler") from exc
    failed = None
    for cmd, p in procs:
        _, err = p.communicate()
        if p.returncode != 0 and failed is None:
            failed = (cmd, err)
    if failed is not None:
        cmd, err = failed
        raise RuntimeError(f"C compiler failed ({' '.join(cmd[:3])} …):\n{err[-3000:]}")


def _build(src: str, modname: str, folder: str, cc: list[str], flags: tuple) -> tuple[str, str]:
    """Compile into a private temporary folder, then move the library into place atomically.

    The source is compiled twice, side by side: the module with the kernel CG_W states wide, and
    (``-DCG_ONE_STATE_PART``) the kernel alone one state wide for ``one()`` (templates/module.c);
    then linked. The link leaves out the fast-math flags: given those at link time gcc (before 13)
    links crtfastmath.o even into a shared library, and loading that would turn on flush-to-zero
    for the whole Python process.

    Returns (file name, sha256). The final name carries the checksum, so concurrent builders
    never overwrite a library another process may be loading.
    """
    work = tempfile.mkdtemp(prefix=f".build-{modname}-", dir=folder)
    try:
        c_path = os.path.join(work, f"{modname}.c")
        with open(c_path, "w", encoding="utf-8") as fh:
            fh.write(src)
        so_tmp = os.path.join(work, f"{modname}{K.ext_suffix()}")
        includes = [f"-I{K.python_include()}", f"-I{np.get_include()}", f"-I{core_include()}"]
        parts = [os.path.join(work, f"{modname}.o"), os.path.join(work, f"{modname}_one.o")]
        _run_compiler([cc + list(flags) + includes + ["-c", c_path, "-o", parts[0]],
                       cc + list(flags) + includes + ["-DCG_ONE_STATE_PART", "-c", c_path, "-o", parts[1]]])
        link_flags = [f for f in flags if f not in _PROCESS_WIDE_MATH_FLAGS]
        _run_compiler([cc + link_flags + parts + ["-o", so_tmp, "-lm"]])
        digest = K.sha256_file(so_tmp)
        final = f"{modname}-{digest[:16]}{K.ext_suffix()}"
        os.replace(so_tmp, os.path.join(folder, final))
        K.atomic_write(os.path.join(folder, f"{modname}.c"), src.encode())
        return final, digest
    finally:
        shutil.rmtree(work, ignore_errors=True)


class CompiledFunction(GeneratedFunction):
    """A compiled module: ``f(q, qd, tau=None, params=None)`` → dict of arrays, N states per call.

    Attributes: ``path`` (the shared library), ``key`` (cache key), ``built`` (True if this call
    compiled it, False if it came from the cache).
    """

    def __init__(self, spec, module, path, key, built, seconds):
        super().__init__(spec)
        self._run = module.run
        self._one = module._one      # NotImplemented, not a TypeError, sends a call down the general path
        self._nin = len(self.sizes)
        self.path, self.key, self.built, self.build_seconds = path, key, built, seconds
        self._out = [(nm, self.output_shapes[nm]) for nm in spec.output_names()]
        self._out_names = [nm for nm, _ in self._out]
        self._out_shapes = [shp for _, shp in self._out]
        self._filled = [self.defaults.get(nm, np.zeros(size) if (nm in self.zero_default or size == 0) else None)
                        for nm, size in zip(self.input_names, self.sizes)]
        # default values of the trailing inputs, for calls that leave them out (None: some are required)
        # (a tuple of tuples: the module's C caller reads it)
        self._tails = tuple(tuple(self._filled[k:]) if all(x is not None for x in self._filled[k:]) else None
                            for k in range(self._nin + 1))

    def _general(self, *args, **kwargs) -> dict:
        """Any call: defaults filled, inputs broadcast to one batch, ``run`` over it."""
        # the same array gate as the C core (complex, object and masked arrays refused, byte order fixed)
        names = self.input_names
        args = tuple(x if x is None or k >= len(names) else _gate(names[k], x) for k, x in enumerate(args))
        kwargs = {k: x if x is None else _gate(k, x) for k, x in kwargs.items()}
        arrays, batch = self._resolve(args, kwargs, check_finite=False)  # C checks finiteness
        n = 1
        for d in batch:
            n *= d
        call = [n]
        for x, size in zip(arrays, self.sizes):
            if x.shape[:-1] == batch:
                call += [np.ascontiguousarray(x), size]
            elif x.ndim == 1:
                call += [x, 0]                   # shared by every state
            else:
                call += [np.ascontiguousarray(np.broadcast_to(x, batch + (size,))), size]
        outs = {nm: np.empty(batch + shp) for nm, shp in self._out}
        call += list(outs.values())
        self._run(*call)
        return outs

    # compile() returns the module's own subclass, whose __call__ is its C caller: one state there, the rest here
    __call__ = _general


_CALLING: dict = {}  # module name -> CompiledFunction's subclass whose __call__ is the module's C caller


def _function(spec, module, path, key, built, seconds) -> CompiledFunction:
    """The CompiledFunction of a loaded module, of the module's own subclass: its ``__call__`` is the
    module's ``_caller`` (templates/module.c), so a call of one state runs without a Python frame
    (~0.6 µs a call: the generated 20-link right-hand side's one call went from 5.1 to 4.4 µs)."""
    cls = _CALLING.get(module.__name__)
    if cls is None:
        cls = _CALLING[module.__name__] = type(CompiledFunction.__name__, (CompiledFunction,), {
            "__call__": module._caller, "__module__": CompiledFunction.__module__,
            "__qualname__": CompiledFunction.__qualname__, "__doc__": CompiledFunction.__doc__})
    return cls(spec, module, path, key, built, seconds)


def _compiler_flags(flags, cc) -> tuple:
    """The compiler flags as a tuple of strings (None: the defaults); a bare string is refused."""
    if flags is None:
        return K.default_flags(cc)
    if isinstance(flags, (str, bytes)) or not all(isinstance(f, str) for f in flags):
        raise TypeError(f"flags: expected a list of strings such as ['-O2', '-march=native'], got {flags!r}")
    return tuple(flags)


def compile(source, values: dict | None = None, *, name: str = "eom", cache_dir=None, flags=None,
            progress=None) -> CompiledFunction:  # noqa: A001 - the issue's name
    """Compile equations of motion (or a :class:`CodeSpec`) with the system C compiler; cached.

    The result is a CPython extension that evaluates N states per call in C with the GIL
    released. The cache key is a SHA-256 of the generated module source (the expressions), the
    compiler's path and version, the flags, the Python extension suffix and the multibody version;
    a new process finds the library and loads it without compiling (a corrupted entry is rebuilt
    with a warning).

    Parameters
    ----------
    source : Model, EquationsOfMotion, Mechanism, TMTSystem, PneSystem or CodeSpec
        What to generate code for (anything :func:`as_spec` accepts). A model is derived
        symbolically first (``multibody.symbolic.derive``; seconds for a few bodies).
    values : dict, optional
        Default parameter values, {parameter symbol or name: number}, for equations that keep
        symbolic parameters (they become the ``param`` input's default). A built-in
        ``symbolic=True`` model brings its own; must be None for a ``CodeSpec``.
    name : str, optional
        Name of the generated function (an identifier; default ``"eom"``).
    cache_dir : str or os.PathLike, optional
        Cache folder; default :func:`multibody.codegen.cache.cache_dir` (``MULTIBODY_CACHE_DIR`` or
        the user cache folder).
    flags : list of str, optional
        Compiler flags instead of the defaults (:func:`multibody.codegen.cache.default_flags`:
        ``-O3 -fPIC -shared -fno-math-errno -march=native``), e.g. ``["-O2", "-fPIC", "-shared"]``.
        Under ``-ffast-math`` the lanes' sin and cos (which rely on exact rounding) become the
        library's, lane by lane. A state alone (``f(q, dq)``, the kernel one state wide) and in a
        batch (``CG_W`` states wide) agree to rounding: the compiler may fuse ``a*b + c`` differently
        at the two widths; add ``-ffp-contract=off`` to the defaults for the same bits (~6 % slower).
    progress : callable, optional
        Called with a one-line message at each stage (CSE, compiling, done).

    Returns
    -------
    CompiledFunction
        Callable ``f(q, dq, tau=None, param=None)`` → dict of arrays ``M`` (..., n, n), ``b``,
        ``g``, ``f`` (..., n), as :func:`to_numpy`'s; ``.path`` (the library), ``.key`` (cache
        key), ``.built`` (False when it came from the cache).

    Raises
    ------
    TypeError
        ``source`` is none of the accepted kinds (the message lists them), or ``values`` is given
        with a ``CodeSpec``.
        Also ``flags`` that is not a list of strings.
    ValueError
        ``name`` is not a valid identifier or is reserved.
    CompilerNotFoundError
        There is no C compiler (the message points to :func:`to_numpy`).
    RuntimeError
        The compiler failed (its last lines of output are in the message).

    Examples
    --------
    >>> import numpy as np, multibody as mb
    >>> from multibody import codegen
    >>> f = codegen.compile(mb.models.double_pendulum())
    >>> out = f(np.zeros((1000, 2)), np.zeros(2))      # 1000 states in one call
    >>> out["M"].shape, out["g"].shape
    ((1000, 2, 2), (1000, 2))
    """
    from .api import as_spec

    t0 = time.perf_counter()
    say = progress or (lambda msg: None)
    spec = as_spec(source, values=values, name=name)
    cc = K.find_compiler()
    flags = _compiler_flags(flags, cc)
    say("common-subexpression elimination")
    spec.cse()
    probe = module_source(spec, "mbcg_MODNAME")
    key = hashlib.sha256(json.dumps([probe, gate_header(), K.compiler_id(cc), list(flags), K.ext_suffix(),
                                     package_version(), np.__version__, K.host_id()])
                         .encode()).hexdigest()
    modname = f"mbcg_{key[:24]}"
    if key in _LOADED:
        mod, path = _LOADED[key]
        return _function(spec, mod, path, key, False, time.perf_counter() - t0)
    folder = K.cache_dir(cache_dir)
    rec_path = os.path.join(folder, f"{modname}.json")
    rec = K.read_record(rec_path)
    if rec is not None and rec.get("key") == key:
        path = K.entry_path(folder, rec.get("file"))   # only a file inside the cache folder
        if path is None:
            warnings.warn(f"codegen cache entry {rec_path} names {str(rec.get('file'))[:200]!r}, not a file in the "
                          "cache folder; ignoring it and rebuilding", RuntimeWarning, stacklevel=2)
        elif os.path.isfile(path) and K.sha256_file(path) == rec.get("sha256"):
            mod = _load(modname, path)
            _LOADED[key] = (mod, path)
            return _function(spec, mod, path, key, False, time.perf_counter() - t0)
        else:
            warnings.warn(f"codegen cache entry {rec_path} is corrupted or incomplete (checksum mismatch); "
                          "rebuilding", RuntimeWarning, stacklevel=2)
    say(f"compiling {len(spec.temporaries)} temporaries with {os.path.basename(cc[0])}")
    src = probe.replace("mbcg_MODNAME", modname)
    final, digest = _build(src, modname, folder, cc, flags)
    K.atomic_write(rec_path, json.dumps({"key": key, "file": final, "sha256": digest, "compiler": K.compiler_id(cc),
                                         "flags": list(flags), "multibody": package_version(),
                                         "created": time.time()}).encode())
    path = os.path.join(folder, final)
    mod = _load(modname, path)
    _LOADED[key] = (mod, path)
    say("done")
    return _function(spec, mod, path, key, True, time.perf_counter() - t0)


def export(source, out_dir, module_name: str = "eom", values: dict | None = None, *, flags=None) -> str:
    """Compile a module importable as ``module_name`` from ``out_dir`` (``import eom`` there, then
    ``eom.one(q, dq, …)`` or ``eom.run(n, in0, stride0, …, out0, …)``); returns the library's path.

    :func:`compile`'s cached libraries are named, and their init functions too, by the hash of the
    expressions, so a copy under another file name cannot be imported: this builds one for the name.

    >>> import importlib, os, sys, tempfile, multibody as mb
    >>> from multibody import codegen
    >>> d = tempfile.mkdtemp()
    >>> path = codegen.export(mb.models.double_pendulum(), d, "dp_eom")
    >>> sys.path.insert(0, d); eom = importlib.import_module("dp_eom"); sys.path.remove(d)
    >>> out = eom.one(np.array([0.3, -0.2]), np.zeros(2), np.zeros(2), np.zeros(0))   # q, dq, tau, param
    >>> eom.__name__, bool(np.allclose(out["M"], mb.crba(mb.models.double_pendulum(), [0.3, -0.2])))
    ('dp_eom', True)
    """
    from .api import as_spec

    if not isinstance(module_name, str) or not module_name.isidentifier():
        raise ValueError(f"module_name: expected a Python identifier (the name to import), got {module_name!r}")
    spec = as_spec(source, values=values, name=module_name)
    cc = K.find_compiler()
    flags = tuple(K.CFLAGS) if flags is None else _compiler_flags(flags, cc)   # portable: a file to ship
    spec.cse()
    out_dir = K.output_folder(out_dir)
    with tempfile.TemporaryDirectory(prefix=".export-", dir=out_dir) as work:
        final, _ = _build(module_source(spec, module_name), module_name, work, cc, flags)
        dest = os.path.join(out_dir, f"{module_name}{K.ext_suffix()}")
        with open(os.path.join(work, final), "rb") as fh:
            K.atomic_write(dest, fh.read())
    return dest


def clear_cache(cache_dir=None) -> int:
    """Delete every compiled module in the cache folder; returns how many files were removed."""
    folder = K.cache_dir(cache_dir)
    removed = 0
    for fn in os.listdir(folder):
        if fn.startswith("mbcg_"):
            try:
                os.unlink(os.path.join(folder, fn))
                removed += 1
            except OSError:
                pass
    _LOADED.clear()
    return removed
