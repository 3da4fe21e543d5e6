"""What the code generators accept: equations of motion, models, proNEu systems, or a CodeSpec."""
from __future__ import annotations

from .spec import CodeSpec, eom_spec

__all__ = ["as_spec", "model_name"]


def model_name(obj) -> str:
    return str(getattr(obj, "name", None) or type(obj).__name__)


def _seed_values(obj) -> dict:
    """{symbol: value} a built-in model carries (``multibody.models.parameters``), else {}."""
    try:
        from ..models import parameters

        return dict(parameters(obj))
    except (ImportError, ValueError, TypeError, AttributeError):
        return dict(getattr(obj, "values", None) or getattr(obj, "param_values", None) or {})


def as_spec(source, *, values: dict | None = None, name: str = "eom", method: str | None = None) -> CodeSpec:
    """The :class:`CodeSpec` every code generator works from, for any accepted ``source``.

    * :class:`CodeSpec` — used as it is (``values`` must be None);
    * :class:`~multibody.symbolic.EquationsOfMotion` — M, b, g, f with inputs q, dq, tau, param;
    * anything ``multibody.symbolic.derive`` accepts — a ``Model`` (numeric models give code
      without parameters; ``symbolic=True`` seed models keep their parameters as the ``param``
      input, defaults = the seed's values, proNEu's ``paramDef``), a ``Mechanism`` (derived with
      the TMT method: constraints and force elements included), a ``TMTSystem``, a ``PneSystem``.

    Parameters
    ----------
    source : Model, EquationsOfMotion, Mechanism, TMTSystem, PneSystem or CodeSpec
        What to generate code for.
    values : dict, optional
        Default parameter values, {symbol or name: number}; they update the seed's own.
    name : str, optional
        Name of the generated function (an identifier; default ``"eom"``).
    method : str, optional
        Derivation method for a model or system (``"rnea"``, ``"tmt"``, ``"pne"``,
        ``"lagrange"``); default ``"rnea"`` where it applies, else the first that accepts it.

    Returns
    -------
    CodeSpec
        Inputs q (n), dq (n), tau (m), param; outputs M (n×n), b, g, f (n).

    Raises
    ------
    TypeError
        ``source`` is none of the accepted kinds, or ``values`` is given with a ``CodeSpec``.
    ValueError
        ``method`` is unknown, or ``name`` is not a valid identifier.

    Examples
    --------
    >>> import multibody as mb
    >>> from multibody import codegen
    >>> spec = codegen.as_spec(mb.models.double_pendulum())
    >>> spec.input_names(), spec.output_names()
    (['q', 'dq', 'tau', 'param'], ['M', 'b', 'g', 'f'])
    >>> spec.input_size("param")         # a numeric model: no parameters left
    0
    """
    from ..symbolic.eom import EquationsOfMotion

    if isinstance(source, CodeSpec):
        if values is not None:
            raise TypeError("values: a CodeSpec carries its own defaults")
        return source.validate()
    if isinstance(source, (int, float, str, bytes, type(None))):
        raise TypeError("expected EquationsOfMotion, a multibody Model or Mechanism, a proNEu/TMT system or a "
                        f"CodeSpec; got {type(source).__name__}")
    label = None
    defaults = {}
    if isinstance(source, EquationsOfMotion):
        eom = source
    else:
        from ..symbolic import derive

        label = model_name(source)
        defaults = _seed_values(source)
        chosen = method
        if chosen is None:  # "rnea" where it applies (fastest), else the first method that accepts it
            from ..symbolic.derivation import DERIVATION_METHODS

            fits = [k for k, e in DERIVATION_METHODS.items() if isinstance(source, e.accepts)]
            chosen = "rnea" if "rnea" in fits else (fits[0] if fits else None)
        try:
            eom = derive(source, **({"method": chosen} if chosen else {}))
        except TypeError as exc:
            raise TypeError("expected EquationsOfMotion, a multibody Model or Mechanism, a proNEu/TMT system or a "
                            f"CodeSpec; got {type(source).__name__} ({exc})") from None
    defaults.update(values or {})
    spec = eom_spec(eom, name=name, values=defaults or None)
    spec.info["model"] = label or eom.extra.get("model", "") or name
    spec.info["zero_default"] = ["tau"]
    spec.info["eom"] = eom
    return spec
