"""Checks at the boundary between users and kernels: shapes, names, batch dimensions, status codes.

Every public numeric function accepts a leading batch dimension ``(..., n)``.  Arguments are
reshaped to ``(N, n)`` (N = 1 for a single state); an argument given once is broadcast by the
kernel (leading size 1), so nothing is copied per state in Python.

Every array goes through the C core's one gate (csrc/common/gate.h; :func:`as_array` here): the C entry
points take any array-like of one state ``(n,)`` or a batch ``(N or 1, n)`` directly; they return
``None`` for other shapes, and the Python face then calls :func:`states` here and calls again
with ``(N, n)`` arrays.  Per-state checks (NaN/inf, zero quaternions) happen in C;
:func:`raise_for` turns a status code into the error of the one status table (csrc/common/status.h).
"""
from __future__ import annotations

import functools

import numpy as np

from .core import _core

OK = 0


def as_array(name: str, x) -> np.ndarray:
    """``x`` as the kernels read it, by the C core's one array gate (csrc/common/gate.h): a native,
    aligned, C-contiguous float64 array (``x`` itself when it already is one).  None, complex,
    object, string and masked arrays are a TypeError naming ``name``; ragged nests a ValueError.

    >>> import numpy as np
    >>> as_array("q", np.arange(3, dtype=">f8")).dtype.isnative
    True
    """
    return _core.gate(name, x)


def as_batch(name: str, x, tail: tuple[int, ...], dims_hint: str = ""):
    """Return (array of shape (N, *tail), batch_shape); the gate's errors (:func:`as_array`), or a
    ValueError naming ``name`` for a shape that does not end in ``tail``."""
    a = as_array(name, x)
    k = len(tail)
    if a.ndim < k or a.shape[a.ndim - k:] != tail:
        raise ValueError(f"{name}: expected shape (..., {', '.join(map(str, tail))}){dims_hint}, got {a.shape}")
    batch = a.shape[:a.ndim - k]
    # explicit leading size: reshape((-1, 0)) is ambiguous for zero-size tails (nq = 0)
    return np.ascontiguousarray(a.reshape((int(np.prod(batch)),) + tail)), batch


def batch_shape(*shapes):
    """Common batch shape of several arguments (NumPy broadcasting); readable error if none."""
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"batch dimensions do not match: {shapes}") from None


def flat_broadcast(name, a2d, batch, common):
    """Give an argument the common batch: leading size 1 (kernel broadcasts) or the full N."""
    n = int(np.prod(common)) if common else 1
    if a2d.shape[0] in (1, n):
        return a2d
    # general broadcasting (e.g. (3,1,nq) with (1,4,nq)) — rare, so a copy is fine here
    full = np.broadcast_to(a2d.reshape(batch + a2d.shape[1:]), common + a2d.shape[1:])
    return np.ascontiguousarray(full.reshape((-1,) + a2d.shape[1:]))


def states(model, optional=("f_ext",), **args):
    """Validate named state arguments against a model; returns (dict of (N, …) arrays, batch shape).

    Recognised names: q (nq), qd/v/qdd/tau (nv), f_ext (nb, 6).  ``None`` is "absent" for the names
    in ``optional`` (skipped) and a TypeError for the others, as in the C entry points.  Every
    array passes the C core's gate (:func:`as_array`).  The single-state case (1-D native float
    arrays of the right length) takes a short path: it is what controllers call thousands of
    times a second.
    """
    if model._symbolic:
        model._require_numeric()
    tails = model._tails
    out, batches, common = {}, [], ()
    for name, x in args.items():
        if x is None:
            if name in optional:
                continue
            raise TypeError(f"{name}: expected an array of numbers, got None")
        tail = tails[name]
        if (type(x) is np.ndarray and x.dtype == np.float64 and x.dtype.isnative and x.shape == tail
                and x.flags.c_contiguous and x.flags.aligned):
            out[name] = (x.reshape((1,) + tail), ())
            continue
        a, b = as_batch(name, x, tail)
        out[name] = (a, b)
        if b:
            batches.append(b)
    if batches:
        common = batch_shape(*batches)
        return {k: flat_broadcast(k, a, b, common) for k, (a, b) in out.items()}, common
    return {k: a for k, (a, _) in out.items()}, ()


def batch_size(common) -> int:
    if not common:
        return 1
    n = 1
    for d in common:
        n *= d
    return n


def raise_for(status: int):
    """Turn a kernel status code into a ValueError."""
    if status != OK:
        raise ValueError(_core.status_message(int(status)))


def call_batched(kernel, model, out_tail, **arrays):
    """``kernel(model._c, …)`` on ``arrays`` validated and batched by :func:`states`: the path of
    every input a C entry point does not take as it is.  The result gets the batch shape back."""
    args, batch = states(model, **arrays)
    return kernel(model._c, *(args.get(name) for name in arrays)).reshape(batch + out_tail)


def fast_entry(kernel, python_face):
    """The public function: ``python_face``'s name, signature and docstring, called through
    ``_core.fast_function`` — the C kernel straight on ``model._c`` when the arguments are plain
    single states (no Python frame, ~100 ns less per call), ``python_face`` for everything else.

    >>> import numpy as np, multibody as mb
    >>> mb.rnea.__name__, mb.rnea.__module__
    ('rnea', 'multibody.dynamics.id')
    """
    entry = _core.fast_function(kernel, python_face)
    functools.update_wrapper(entry, python_face)
    return entry
