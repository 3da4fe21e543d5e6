"""The API reference (docs/api.md) is what tools/api_reference.py generates from the docstrings now,
and every public function documents its parameters, its result and an example (numpydoc)."""
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import multibody as mb

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("_api_reference", ROOT / "tools" / "api_reference.py")
api = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("_api_reference", api)
_spec.loader.exec_module(api)

# Public functions whose docstrings do not yet have the numpydoc Parameters and Returns sections and
# an example.  They live in files other sessions own; this list may only shrink: the test below
# fails when a listed name meets the rule, so that it is taken off the list.
NOT_YET_DOCUMENTED: set[str] = set()   # empty: every public function meets the rule


# The same rule for the public functions of each subpackage of mb._SUBMODULES (their __all__), as
# "submodule.name".  This list, too, may only shrink.
SUBMODULE_NOT_YET_DOCUMENTED: set[str] = set()   # empty, as above


def submodule_routines():
    """``"submodule.name"`` of every function (not class) in each submodule's ``__all__``."""
    names = []
    for sub in mb._SUBMODULES:
        module = importlib.import_module(f"multibody.{sub}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and not inspect.isclass(obj):
                names.append(f"{sub}.{name}")
    return sorted(names)


def _submodule_object(qualified):
    sub, name = qualified.split(".", 1)
    return getattr(importlib.import_module(f"multibody.{sub}"), name)


def public_routines():
    return sorted(name for name in mb._PUBLIC if callable(getattr(mb, name)) and not inspect.isclass(getattr(mb, name)))


def documented_parameters(lines):
    """Names of the items of a numpydoc Parameters section (``a, b : float`` documents a and b)."""
    names = set()
    for head, _ in api.section_items(lines):
        names.update(n.strip() for n in head.split(":", 1)[0].split(","))
    return names


def docstring_faults(obj):
    """What ``obj``'s docstring lacks of the rule; empty when it meets it."""
    doc = inspect.getdoc(obj) or ""
    summary, sections = api.split_docstring(doc)
    faults = []
    if not summary:
        faults.append("a summary line")
    params = [("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name
              for p in inspect.signature(obj).parameters.values()]
    if params:
        missing = [p for p in params if p not in documented_parameters(sections.get("Parameters", []))]
        if missing:
            faults.append(f"Parameters entries for {missing}")
    returns_none = inspect.signature(obj).return_annotation in (None, "None")
    if not returns_none and not sections.get("Returns"):
        faults.append("a Returns section")
    if ">>>" not in doc:
        faults.append("an example (>>>)")
    return faults


def test_the_api_page_is_current():
    text = api.generate()
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert page == text, "docs/api.md is out of date: run python tools/api_reference.py"


def test_the_api_page_has_every_public_name_with_an_anchor():
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in mb._PUBLIC if f'<a id="mb.{n}"></a>' not in page]
    assert not missing
    for sub in mb._SUBMODULES:
        for name in getattr(importlib.import_module(f"multibody.{sub}"), "__all__", ()):
            assert f'<a id="mb.{sub}.{name}"></a>' in page, f"mb.{sub}.{name}"
    # what the page shows of aba: its signature and its numpydoc sections
    entry = page.split('<a id="mb.aba"></a>')[1].split("<a id=")[0]
    assert "mb.aba(model" in entry and "**Parameters**" in entry and "**Returns**" in entry
    assert "**Raises**" in entry and "- `tau`" in entry


def test_the_docs_index_links_the_api_page():
    assert "(api.md)" in (ROOT / "docs" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", public_routines())
def test_public_function_has_a_numpydoc_docstring(name):
    faults = docstring_faults(getattr(mb, name))
    if name in NOT_YET_DOCUMENTED:
        assert faults, f"mb.{name} meets the rule now: take it off NOT_YET_DOCUMENTED"
    else:
        assert not faults, f"mb.{name}'s docstring lacks {', '.join(faults)}"


def test_the_list_of_undocumented_names_names_public_functions():
    assert NOT_YET_DOCUMENTED <= set(public_routines())


@pytest.mark.parametrize("qualified", submodule_routines())
def test_submodule_function_has_a_numpydoc_docstring(qualified):
    faults = docstring_faults(_submodule_object(qualified))
    if qualified in SUBMODULE_NOT_YET_DOCUMENTED:
        assert faults, f"mb.{qualified} meets the rule now: take it off SUBMODULE_NOT_YET_DOCUMENTED"
    else:
        assert not faults, f"mb.{qualified}'s docstring lacks {', '.join(faults)}"


def test_the_list_of_undocumented_submodule_names_names_public_functions():
    assert SUBMODULE_NOT_YET_DOCUMENTED <= set(submodule_routines())


def test_help_shows_the_signature_parameters_and_an_example():
    import pydoc
    text = pydoc.render_doc(mb.aba, renderer=pydoc.plaintext)
    assert "Parameters" in text and ">>> " in text and "tau" in text


def test_the_rule_finds_a_missing_section():
    def f(a, b):
        """Sum.

        Parameters
        ----------
        a : float
            first.

        >>> f(1, 2)
        3
        """
    assert docstring_faults(f) == ["Parameters entries for ['b']", "a Returns section"]


# The Raises sections of the dynamics functions say what a wrong kind of argument raises; hold them to it.
def _calls(model, q):
    z = np.zeros(2)
    return {
        "rnea": lambda: mb.rnea(model, q, z, z), "aba": lambda: mb.aba(model, q, z, z),
        "fd_crb": lambda: mb.fd_crb(model, q, z, z), "fd_sparse": lambda: mb.fd_sparse(model, q, z, z),
        "crba": lambda: mb.crba(model, q), "hand_c": lambda: mb.hand_c(model, q, z),
        "hybrid_dynamics": lambda: mb.hybrid_dynamics(model, [True, False], q, z, z, z),
        "energy": lambda: mb.energy(model, q, z), "minv": lambda: mb.minv(model, q),
        "rnea_derivatives": lambda: mb.rnea_derivatives(model, q, z, z),
        "aba_derivatives": lambda: mb.aba_derivatives(model, q, z, z),
        "gravity_compensation_forces": lambda: mb.gravity_compensation_forces(model, q),
        "gravity_compensation_torques": lambda: mb.gravity_compensation_torques(model, q),
    }


@pytest.mark.parametrize("name", sorted(_calls(None, None)))
def test_documented_type_errors_of_the_dynamics(name):
    model = mb.models.planar(2)
    with pytest.raises(TypeError, match=r"^model: expected a multibody.Model, got str"):
        _calls("planar", np.zeros(2))[name]()
    with pytest.raises(TypeError, match=r"^q: expected an array of numbers, got None"):
        _calls(model, None)[name]()
    with pytest.raises(TypeError, match=r"^q: expected an array of numbers"):
        _calls(model, "ab")[name]()
    with pytest.raises(ValueError, match=r"^q: expected shape \(\.\.\., 2\), got \(3,\)"):
        _calls(model, np.zeros(3))[name]()


def test_documented_errors_of_fd_gq_and_the_floating_base():
    gear = mb.models.double_elbow()
    with pytest.raises(TypeError, match=r"^model: expected a multibody.Model, got int"):
        mb.fd_gq(1, np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match=r"^q: expected an array of numbers, got None"):
        mb.fd_gq(gear, None, np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"^model.gamma_q: FDgq needs"):
        mb.fd_gq(mb.models.planar(2), np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError, match=r"^X: expected an array of numbers"):
        mb.fbanim("ab")
    with pytest.raises(TypeError, match=r"^x: expected an array of numbers, got None"):
        mb.fbkin_inverse(None)
    with pytest.raises(ValueError, match=r"^x: contains NaN or inf"):
        mb.fbkin_inverse([1, 0, 0, 0, np.nan, 0, 0])          # was a silent NaN in q
    with pytest.raises(ValueError, match=r"^qd: contains NaN or inf"):
        mb.fbkin_forward(np.zeros(6), [0, 0, np.inf, 0, 0, 0])
    with pytest.raises(ValueError, match=r"^model: FDfb/IDfb work only with spatial models"):
        mb.fd_fb(mb.models.planar(2), np.r_[1, np.zeros(12)])


def test_documented_errors_of_revolute_closure():
    with pytest.raises(ValueError, match=r"^axis_b: expected a non-zero 3-vector"):
        mb.revolute_closure("link2", [1, 0, 0], [0, 0, 1], None, [1, 1, 0], [0, 0, 0])
    with pytest.raises(TypeError, match=r"^axis_b: expected an array of numbers, got None"):
        mb.revolute_closure("link2", [1, 0, 0], [0, 0, 1], None, [1, 1, 0], None)


def test_documented_errors_of_model_fingerprint_and_tmt_biped():
    """model_fingerprint(None) was an AttributeError and a symbolic model 'Cannot convert expression to
    float'; tmt_biped took upper_body='yes' as True and a negative I_0 was named as a body's inertia."""
    from multibody.simulation import model_fingerprint, tmt_biped
    with pytest.raises(TypeError, match=r"^model: expected a multibody.Model, got NoneType$"):
        model_fingerprint(None)
    with pytest.raises(ValueError, match=r"^model has symbolic parameters"):
        model_fingerprint(mb.models.ra3link(symbolic=True))
    with pytest.raises(TypeError, match=r"^upper_body: expected True or False, got str 'yes'$"):
        tmt_biped(upper_body="yes")
    with pytest.raises(ValueError, match=r"^I_0: expected a finite number ≥ 0, got -1.0$"):
        tmt_biped(I_0=-1)


def test_every_public_function_is_type_hinted():
    """Issue 36: type hints on the public API (with py.typed), resolvable at run time."""
    import typing
    for name in public_routines():
        fn = getattr(mb, name)
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty or any(
            p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), name
        typing.get_type_hints(fn)   # names it uses exist where it is defined
    assert (ROOT / "src" / "multibody" / "py.typed").exists()
