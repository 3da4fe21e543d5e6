"""What the code generators accept: equations of motion, models, proNEu systems, or a CodeSpec."""
from __future__ import annotations

from .spec import CodeSpec, eom_spec

__all__ = ["as_spec", "model_name"]


def model_name(obj) -> str:
    return str(getattr(obj, "name", None) or type(obj).__name__)


def as_spec(source, *, values: dict | None = None, name: str = "eom", method: str | None = None) -> CodeSpec:
    """A :class:`CodeSpec` for ``source``:

    * :class:`CodeSpec` — used as it is (``values`` must be None);
    * :class:`~multibody.symbolic.EquationsOfMotion` — M, b, g, f with inputs q, dq, tau, param;
    * a ``multibody.Model`` — ``derive(model)`` first (numeric models give code without
      parameters; symbolic ones keep their parameter symbols as ``param``);
    * a proNEu system (``mb.models.starleth()`` …, anything with ``derive()`` and
      ``param_values``) — derived with its own method, defaults = its ``param_values`` (paramDef).
    """
    from ..symbolic.eom import EquationsOfMotion

    if isinstance(source, CodeSpec):
        if values is not None:
            raise TypeError("values: a CodeSpec carries its own defaults")
        return source.validate()
    label = None
    defaults = {}
    if isinstance(source, EquationsOfMotion):
        eom = source
    elif hasattr(source, "jtype") and hasattr(source, "parent"):
        from ..symbolic import derive

        label = model_name(source)
        eom = derive(source, **({"method": method} if method else {}))
    elif callable(getattr(source, "equations", None)) and hasattr(source, "values"):  # TMTSystem
        label = model_name(source)
        defaults = dict(source.values or {})
        eom = source.equations()
    elif callable(getattr(source, "derive", None)):
        label = model_name(source)
        defaults = dict(getattr(source, "param_values", {}) or {})
        eom = source.derive()
        if not isinstance(eom, EquationsOfMotion):
            raise TypeError(f"{label}.derive() returned {type(eom).__name__}, not EquationsOfMotion")
    else:
        raise TypeError("expected EquationsOfMotion, a multibody Model, a proNEu system or a CodeSpec; got "
                        f"{type(source).__name__}")
    defaults.update(values or {})
    spec = eom_spec(eom, name=name, values=defaults or None)
    spec.info["model"] = label or eom.extra.get("model", "") or name
    spec.info["zero_default"] = ["tau"]
    spec.info["eom"] = eom
    return spec
