"""The Python face shared by generated NumPy functions and compiled modules: argument handling.

A generated function is called with its input arrays by position (in the spec's order) or by
name; for equations of motion ``f(q, qd, tau=None, params=None)`` — ``tau`` defaults to zeros,
``params`` to the model's default values. Each input is ``(size,)`` for one state or
``(..., size)`` for a batch; the result is a dict ``{name: array}`` with the batch shape in front.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GeneratedFunction"]

# alternative spellings accepted as keywords, per default array name
_ALIASES = {"dq": ("qd",), "param": ("params", "p"), "ddq": ("qdd",)}


class GeneratedFunction:
    """Base class: resolves arguments into float arrays with one common batch shape."""

    def __init__(self, spec):
        self.spec = spec
        self.input_names = spec.input_names()
        self.sizes = [len(s) for _, s in spec.inputs]
        self.output_shapes = {nm: ((shp[0],) if spec.is_vector(nm) else shp) for nm, shp, _ in spec.outputs}
        self.defaults = {k: np.ascontiguousarray(v, dtype=float) for k, v in spec.defaults.items()}
        self.zero_default = set(spec.info.get("zero_default", ()))
        alias = {}
        for nm in self.input_names:
            alias[nm] = nm
            for a in _ALIASES.get(spec.info.get("canonical", {}).get(nm, nm), ()):
                alias.setdefault(a, nm)
        self._alias = alias

    def _resolve(self, args, kwargs, check_finite: bool = True):
        if len(args) > len(self.input_names):
            raise TypeError(f"{self.spec.name}: takes {len(self.input_names)} inputs "
                            f"({', '.join(self.input_names)}), got {len(args)} positional arguments")
        given = dict(zip(self.input_names, args))
        for k, v in kwargs.items():
            nm = self._alias.get(k)
            if nm is None:
                raise TypeError(f"{self.spec.name}: unexpected argument {k!r}; inputs are "
                                f"{', '.join(self.input_names)}")
            if nm in given and given[nm] is not None:
                raise TypeError(f"{self.spec.name}: input {nm!r} given twice")
            given[nm] = v
        arrays = []
        batch = ()
        for nm, size in zip(self.input_names, self.sizes):
            x = given.get(nm)
            if x is None:
                if nm in self.defaults:
                    x = self.defaults[nm]
                elif nm in self.zero_default or size == 0:
                    x = np.zeros(size)
                else:
                    raise TypeError(f"{self.spec.name}: missing input {nm!r} ({size} values)")
            try:
                x = np.asarray(x, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"{nm}: expected an array of numbers") from None
            if x.ndim == 0 or x.shape[-1] != size:
                raise ValueError(f"{nm}: expected shape ({size},) or (..., {size}), got {x.shape}")
            if check_finite and not np.all(np.isfinite(x)):
                raise ValueError(f"{nm}: contains NaN or infinite values")
            arrays.append(x)
            try:
                batch = np.broadcast_shapes(batch, x.shape[:-1])
            except ValueError:
                raise ValueError(f"{nm}: batch shape {x.shape[:-1]} does not broadcast with {batch}") from None
        return arrays, batch

    def __repr__(self):
        outs = ", ".join(f"{k}{list(v)}" for k, v in self.output_shapes.items())
        ins = ", ".join(f"{n}[{s}]" for n, s in zip(self.input_names, self.sizes))
        return f"<{type(self).__name__} {self.spec.name}({ins}) -> {outs}>"
