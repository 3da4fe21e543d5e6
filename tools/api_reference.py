"""The API reference page, docs/api.md, generated from the docstrings.

What it covers: every name of the package's public-name table (``multibody._PUBLIC``, reached as
``mb.X``), grouped by the module the table names, then every subpackage of ``mb._SUBMODULES``
with the names of its ``__all__``.  Per name: its signature, the docstring's summary and its
numpydoc ``Parameters`` / ``Returns`` / ``Raises`` sections (a class adds its public methods'
signatures and summaries).  A name that is the same object as one already on the page (``mb.rx``
and ``mb.spatial_v2.rx``) is a link to that entry, not a second copy.  Every entry has an anchor
``#mb.X`` (``#mb.spatial.rx`` …).

Run ``python tools/api_reference.py`` after changing a public docstring or signature: it writes
docs/api.md; ``--check`` only compares and exits 1 when the page is out of date.
``tests/test_api_reference.py`` fails in CI when the checked-in page differs from what this
tool generates.
"""
from __future__ import annotations

import enum
import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api.md"
SECTIONS = ("Parameters", "Returns", "Yields", "Raises")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")          # object reprs in defaults: not reproducible


# --------------------------------------------------------------------------- docstrings
def split_docstring(doc: str | None) -> tuple[str, dict[str, list[str]]]:
    """(summary, {section title: its lines}) of a numpydoc docstring.

    The summary is the first paragraph joined into one line; a section starts at a title line
    underlined with dashes and runs to the next such title.

    >>> summary, sections = split_docstring('''Add.
    ...
    ... Parameters
    ... ----------
    ... a : float
    ...     first.
    ... ''')
    >>> summary, sections["Parameters"]
    ('Add.', ['a : float', '    first.'])
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    summary = []
    for line in lines:
        if not line.strip():
            break
        summary.append(line.strip())
    sections: dict[str, list[str]] = {}
    current = None
    k = 0
    while k < len(lines):
        line = lines[k]
        underline = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if line.strip() and underline and set(underline) == {"-"} and len(underline) >= len(line.strip()) - 1:
            current = line.strip()
            sections[current] = []
            k += 2
            continue
        if current is not None:
            sections[current].append(line)
        k += 1
    return " ".join(summary), {t: _trim(v) for t, v in sections.items()}


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


def section_items(lines: list[str]) -> list[tuple[str, str]]:
    """numpydoc items ``head`` (unindented) with their indented description joined into one line."""
    items: list[tuple[str, list[str]]] = []
    for line in lines:
        if not line.strip():
            if items:
                items[-1][1].append("")
            continue
        if not line.startswith((" ", "\t")):
            items.append((line.strip(), []))
        elif items:
            items[-1][1].append(line.strip())
    return [(head, _paragraphs(body)) for head, body in items]


def _paragraphs(lines: list[str]) -> str:
    text, para = [], []
    for line in lines + [""]:
        if line:
            para.append(line)
        elif para:
            text.append(" ".join(para))
            para = []
    return "<br>".join(text)


# --------------------------------------------------------------------------- entries
class _Shown:
    """An annotation shown as written (``from __future__ import annotations`` keeps them as strings)."""

    def __init__(self, text):
        self.text = text if isinstance(text, str) else inspect.formatannotation(text)

    def __repr__(self):
        return self.text


def signature(obj, returns: bool = True) -> str:
    """``(a: ArrayLike, b=1) -> NDArray``: the signature with annotations unquoted, no addresses."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    empty = inspect.Signature.empty
    params = [p.replace(annotation=_Shown(p.annotation)) if p.annotation is not empty else p
              for p in sig.parameters.values()]
    ret = _Shown(sig.return_annotation) if returns and sig.return_annotation is not empty else empty
    return _ADDRESS.sub("", str(sig.replace(parameters=params, return_annotation=ret)))


def markdown(text: str) -> str:
    """reST inline markup as Markdown: ``x`` and :func:`x` become `x`."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _kind(obj) -> str:
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "exception"
        return "enum" if issubclass(obj, enum.Enum) else "class"
    if callable(obj):
        return "function"
    return "constant"


def _anchor(path: str) -> str:
    return path


def _render_sections(sections: dict[str, list[str]]) -> list[str]:
    out = []
    for title in SECTIONS:
        if title not in sections:
            continue
        out.append(f"**{title}**")
        out.append("")
        for head, text in section_items(sections[title]):
            head = head.replace("|", "\\|")
            if title == "Raises" or ":" not in head:
                name, kind = head, ""
            else:
                name, kind = (s.strip() for s in head.split(":", 1))
            line = f"- `{name}`" + (f" ({kind})" if kind else "") + (f": {text}" if text else "")
            out.append(markdown(line))
        out.append("")
    return out


def _methods(cls) -> list[tuple[str, object]]:
    """Public methods and properties the class itself defines (not those of object or Exception)."""
    if issubclass(cls, (BaseException, enum.Enum)):
        return []
    found = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            found.append((name, member))
    return found


def render_entry(path: str, obj, heading: str = "###") -> list[str]:
    kind = _kind(obj)
    doc = inspect.getdoc(obj) if kind != "constant" else None
    summary, sections = split_docstring(doc)
    if kind == "constant" and inspect.ismodule(obj):   # its name, never its file's path (differs per checkout)
        title = f"`{path}`: the module `{obj.__name__}`"
    elif kind == "constant":
        title = f"`{path} = {_ADDRESS.sub('', repr(obj))}`"
    else:
        sig = signature(obj, returns=kind == "function") if kind in ("function", "class") else ""
        prefix = "" if kind == "function" else f"{kind} "
        title = f"{prefix}`{path}{sig}`"
    out = [f'<a id="{_anchor(path)}"></a>', "", f"{heading} {title}", ""]
    if summary:
        out += [markdown(summary), ""]
    out += _render_sections(sections)
    if kind == "class":
        methods = _methods(obj)
        if methods:
            out += ["**Methods and properties**", ""]
            for name, member in methods:
                msum, _ = split_docstring(inspect.getdoc(member))
                if isinstance(member, property):
                    shown = f"`{name}` (property)"
                else:
                    sig = signature(member).replace("(self, ", "(").replace("(self)", "()")
                    shown = f"`{name}{sig}`"
                out.append(f"- {shown}" + (f": {markdown(msum)}" if msum else ""))
            out.append("")
    return out


# --------------------------------------------------------------------------- the page
def _same_object_is_documented(obj) -> bool:
    # identity makes sense for functions, classes and modules; equal small numbers are not "the same name"
    return callable(obj) or inspect.ismodule(obj)


def generate() -> str:
    """The text of docs/api.md for the package as imported now."""
    import multibody as mb

    groups: dict[str, list[str]] = {}
    for name, where in mb._PUBLIC.items():
        groups.setdefault("multibody" + where, []).append(name)

    seen: dict[int, str] = {}      # id of a documented object → its path
    body: list[str] = []
    toc = ["- [`mb.*`: the public names](#the-public-names)"]

    body += ['<a id="the-public-names"></a>', "", "## `mb.*`: the public names", "",
             "The names of ``multibody._PUBLIC``, grouped by the module that defines them.", ""]
    for module, names in groups.items():
        body += [f"### `{module}`", ""]
        doc_summary, _ = split_docstring(inspect.getdoc(importlib.import_module(module)))
        if doc_summary:
            body += [markdown(doc_summary), ""]
        for name in names:
            obj = getattr(mb, name)
            path = f"mb.{name}"
            body += render_entry(path, obj, "####")
            if _same_object_is_documented(obj):
                seen.setdefault(id(obj), path)
        toc.append(f"  - [`{module}`](#{_anchor('mb.' + names[0])})")

    for sub in mb._SUBMODULES:
        module = importlib.import_module(f"multibody.{sub}")
        names = list(getattr(module, "__all__", ()))
        if not names:
            continue
        anchor = f"mb.{sub}"
        toc.append(f"- [`mb.{sub}`](#{anchor})")
        body += [f'<a id="{anchor}"></a>', "", f"## `mb.{sub}`", ""]
        doc_summary, _ = split_docstring(inspect.getdoc(module))
        if doc_summary:
            body += [markdown(doc_summary), ""]
        for name in names:
            obj = getattr(module, name)
            path = f"mb.{sub}.{name}"
            first = seen.get(id(obj)) if _same_object_is_documented(obj) else None
            if first is not None:
                body += [f'<a id="{_anchor(path)}"></a>', "",
                         f"- `{path}`: the same object as [`{first}`](#{_anchor(first)})", ""]
                continue
            body += render_entry(path, obj)
            if _same_object_is_documented(obj):
                seen[id(obj)] = path

    head = ["# API reference", "",
            "Generated from the docstrings by `tools/api_reference.py`; do not edit by hand. After changing",
            "a public docstring or signature run `python tools/api_reference.py` (CI checks that this page",
            "is current: `tests/test_api_reference.py`). `mb` is `import multibody as mb`; shapes use",
            "`nq`, `nv` (position and velocity variables), `nb` (bodies) and `...` for leading batch",
            "dimensions.  The tutorials are listed in [README.md](README.md).", "", "## Contents", ""]
    text = "\n".join(head + toc + [""] + body)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if "--check" in argv:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python tools/api_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
