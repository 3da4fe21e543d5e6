"""What an MJCF document asks MuJoCo to allocate, checked before MuJoCo's compiler sees it.

MuJoCo's compiler allocates what a document declares (a 250-byte file with a 65 536 × 65 537
height field makes it crash the process), so :func:`check_declared_sizes` reads the document
first — with lxml and the options ``urdf.py`` uses for hostile input (no entity expansion, no
network, no DTD, libxml2's size limits on) — and refuses, naming the element:

* height fields: ``nrow × ncol`` samples, or the dimensions in the header of the PNG or binary
  file they load, beyond :data:`MAX_HFIELD_SAMPLES`;
* textures: ``width × height`` pixels (six faces for cube and skybox textures), or a PNG file's,
  beyond :data:`MAX_TEXTURE_PIXELS`;
* replication: the product of nested ``<replicate count>`` and a ``<composite>``/``<flexcomp>``
  ``count`` beyond :data:`MAX_COPIES`;
* flexes: a ``<flexcomp count>`` (or a ``<flex vertex>`` list) of more than :data:`MAX_FLEX_VERTICES`
  vertices — MuJoCo's compile time grows about as the cube of a flex's side (a 194-byte document
  with a 150 × 150 grid takes 88 s), so the bound is on the cost, not the file's size;
* ``<size nkey nuser_…>`` beyond :data:`MAX_SIZE_FIELD`;
* files (includes, meshes, height fields, textures, skins): larger than :data:`MAX_ASSET_BYTES`,
  or not regular files (a FIFO would block the compiler forever); includes nested deeper than
  :data:`MAX_INCLUDE_DEPTH`.

Malformed values, and malformed XML (read with lxml's recovering parser for this check), are left
for MuJoCo to report with its line numbers.
"""
from __future__ import annotations

import math
import os
import stat
import struct

MAX_HFIELD_SAMPLES = 1 << 24      # 16.8 M samples: 64 MB of float32
MAX_TEXTURE_PIXELS = 1 << 24
MAX_COPIES = 100_000
MAX_SIZE_FIELD = 1 << 16
MAX_FLEX_VERTICES = 4096          # a 64 × 64 grid compiles in about 3 s; 150 × 150 in 88 s
MAX_ASSET_BYTES = 256 << 20
MAX_INCLUDE_DEPTH = 16
_FILE_ATTRS = {"hfield": ("file",), "mesh": ("file",), "skin": ("file",),
               "texture": ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")}


def _ints(value):
    """The integers of an attribute, or None when it is not a list of integers (MuJoCo says why)."""
    try:
        return [int(x) for x in value.split()]
    except (AttributeError, ValueError):
        return None


def _where(el, label):
    return f"{label}: <{el.tag}{' name=' + repr(el.get('name')) if el.get('name') else ''}> (line {el.sourceline})"


class _Reader:
    """Walks a document and its includes; ``error`` builds the caller's exception."""

    def __init__(self, label, base_dir, assets, error):
        self.label, self.base_dir, self.assets, self.error = label, base_dir, assets or {}, error
        self.dirs = {"mesh": "", "texture": "", "asset": ""}

    # ---- files --------------------------------------------------------------------------------
    def _file(self, name, kind):
        """A path to the file MuJoCo would open for ``name``, or None (an asset in memory, or none)."""
        if name in self.assets:
            return None
        sub = "" if kind == "include" else (self.dirs["texture" if kind == "texture" else "mesh"]
                                            or self.dirs["asset"])
        path = name if os.path.isabs(name) else os.path.join(self.base_dir, sub, name)
        return path

    def head(self, el, name, kind, n=32) -> bytes:
        """The first ``n`` bytes of the file ``name`` names, after checking it is a regular file
        no larger than MAX_ASSET_BYTES (b"" when it does not exist: MuJoCo reports that)."""
        if name in self.assets:
            data = self.assets[name]
            if len(data) > MAX_ASSET_BYTES:
                raise self.error(f"{_where(el, self.label)}: asset {name!r} has {len(data)} bytes, more than "
                                 f"the limit of {MAX_ASSET_BYTES}")
            return bytes(data[:n])
        path = self._file(name, kind)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except (OSError, ValueError):
            return b""
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise self.error(f"{_where(el, self.label)}: {path!r} is not a regular file")
            if st.st_size > MAX_ASSET_BYTES:
                raise self.error(f"{_where(el, self.label)}: {path!r} has {st.st_size} bytes, more than the "
                                 f"limit of {MAX_ASSET_BYTES}")
            return os.read(fd, n) if kind != "include" else _read_all(fd, st.st_size)
        finally:
            os.close(fd)

    # ---- the walk -----------------------------------------------------------------------------
    def document(self, data: bytes, depth: int):
        from lxml import etree
        root = None
        for recover in (False, True):   # a malformed document: check what can be read, MuJoCo says what is wrong
            parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                                     remove_comments=True, recover=recover)
            try:
                root = etree.fromstring(data, parser)
                break
            except (etree.LxmlError, ValueError) as e:
                problem = " ".join(str(e).split())[:300]
        if root is None:
            raise self.error(f"{self.label}: not well-formed XML ({problem})")
        if depth == 0:
            for c in root.iter("compiler"):
                for k in ("meshdir", "texturedir", "assetdir"):
                    if c.get(k) is not None:
                        self.dirs[k.removesuffix("dir")] = c.get(k)
        self.element(root, depth, 1)

    def element(self, el, depth, copies):
        for child in el:
            if not isinstance(child.tag, str):
                continue
            n = copies
            if child.tag in ("replicate", "composite", "flexcomp"):
                counts = _ints(child.get("count", "1")) or [1]
                n = copies * math.prod(max(c, 1) for c in counts)
                if n > MAX_COPIES:
                    raise self.error(f"{_where(child, self.label)}: count {child.get('count')!r} makes {n} copies "
                                     f"(with the enclosing replicates), more than the limit of {MAX_COPIES}")
            self.check(child, depth)
            if child.tag == "include" and child.get("file"):
                if depth + 1 > MAX_INCLUDE_DEPTH:
                    raise self.error(f"{_where(child, self.label)}: includes nested deeper than {MAX_INCLUDE_DEPTH}")
                data = self.head(child, child.get("file"), "include")
                if child.get("file") in self.assets:
                    data = bytes(self.assets[child.get("file")])
                if data:
                    self.document(data, depth + 1)
            self.element(child, depth, n)

    def check(self, el, depth):
        tag = el.tag
        if tag == "hfield":
            rc = [_ints(el.get(k, "0")) for k in ("nrow", "ncol")]
            if all(v and len(v) == 1 for v in rc) and rc[0][0] > 0 and rc[1][0] > 0:
                self.samples(el, rc[0][0], rc[1][0], "nrow × ncol")
        if tag == "texture":
            w, h = _ints(el.get("width", "0")), _ints(el.get("height", "0"))
            if w and h and len(w) == len(h) == 1 and w[0] > 0:
                faces = 6 if el.get("type") in ("cube", "skybox") else 1
                self.pixels(el, w[0] * max(h[0], w[0] if faces == 6 else h[0]) * faces, "width × height")
        if tag in ("flexcomp", "flex"):
            if tag == "flexcomp":
                counts = _ints(el.get("count", "1")) or [1]
                vertices = math.prod(max(c, 1) for c in counts)
                what = f"count {el.get('count')!r} makes a flex of {vertices} vertices"
            else:
                vertices = len((el.get("vertex") or "").split()) // 3
                what = f"{vertices} vertices"
            if vertices > MAX_FLEX_VERTICES:
                raise self.error(f"{_where(el, self.label)}: {what}, more than the limit of {MAX_FLEX_VERTICES} "
                                 "(MuJoCo's compile time grows about as the cube of a flex's side)")
        if tag == "size":
            for k, v in el.attrib.items():
                if k == "nkey" or k.startswith("nuser_"):
                    n = _ints(v)
                    if n and len(n) == 1 and n[0] > MAX_SIZE_FIELD:
                        raise self.error(f"{_where(el, self.label)}: {k}={n[0]} exceeds the limit of {MAX_SIZE_FIELD}")
        for attr in _FILE_ATTRS.get(tag, ()):
            name = el.get(attr)
            if not name:
                continue
            head = self.head(el, name, tag)
            dims = _png_size(head)
            if dims is None and tag == "hfield" and not name.lower().endswith(".png") and len(head) >= 8:
                dims = struct.unpack("<ii", head[:8])        # MuJoCo's binary height field header
            if dims is not None and tag == "hfield":
                self.samples(el, dims[0], dims[1], f"file {name!r}: rows × columns")
            elif dims is not None and tag == "texture":
                self.pixels(el, dims[0] * dims[1], f"file {name!r}: width × height")

    def samples(self, el, a, b, what):
        if a * b > MAX_HFIELD_SAMPLES:
            raise self.error(f"{_where(el, self.label)}: {what} = {a} × {b} = {a * b} height samples, more than "
                             f"the limit of {MAX_HFIELD_SAMPLES}")

    def pixels(self, el, n, what):
        if n > MAX_TEXTURE_PIXELS:
            raise self.error(f"{_where(el, self.label)}: {what} makes {n} pixels, more than the limit of "
                             f"{MAX_TEXTURE_PIXELS}")


def _read_all(fd, size):
    chunks, left = [], size
    while left > 0:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def _png_size(head: bytes):
    """(width, height) from a PNG's IHDR chunk, or None when ``head`` is not a PNG."""
    if len(head) >= 24 and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    return None


def check_declared_sizes(text: str, label: str, base_dir, assets, error) -> None:
    """Raise ``error(message)`` when the MJCF document ``text`` (or a file it includes or loads)
    declares more than the limits above; see the module docstring.

    >>> check_declared_sizes('<mujoco><asset><hfield name="h" nrow="65536" ncol="65537" size="1 1 1 1"/>'
    ...                      '</asset></mujoco>', "<string>", ".", None, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: <string>: <hfield name='h'> (line 1): nrow × ncol = 65536 × 65537 = 4295032832 height samples,
    more than the limit of 16777216
    """
    _Reader(label, os.fspath(base_dir), assets, error).document(text.encode("utf-8", errors="replace"), 0)
