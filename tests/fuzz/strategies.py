"""Hypothesis strategies for the fuzz tests: nasty values, byte / text / XML mutations, and
structure-aware generators of every file format the app reads (no tests here).

Formats here: edge lists (``# n = …`` headers, weights, garbage lines), GraphML, Cahn–Hilliard
field files (``.npz`` / ``.npy``, and a zip bomb), sessions (``.gsession``), presets (JSON) and
sweep result CSVs; the model formats (``.flint``, CellML, SBML) are in model_docs.py.
Each generator draws *plausible* documents (mostly well-formed, so that the deep parts of the
readers are reached) and then, with some probability, damages them: byte flips, truncation,
insertions of huge numbers, NaN, deep nesting, BOMs and XML entities.
"""
from __future__ import annotations

import io
import json
import re
import struct
import zipfile

import numpy as np
from hypothesis import strategies as st

# ----------------------------------------------------------------------------------- values
#: numbers as text that every parser must survive
NASTY_NUMBERS = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e309", "1.8e308",
                 "9" * 400, "-" + "9" * 30, "0", "-0", "-0.0", "-1", "-5", "1e-320", "5e-324", "2147483648",
                 "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551616",
                 "1e20", "1e9", "100000", "0x10", "1_000", "１２", "٣", "1e", ".", "+", "--1", "1.5", "0.5",
                 "3", "", " ", "\t", "1,5", "١e5"]
BOMS = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"]
#: byte strings inserted by the byte mutator
CHUNKS = [b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\n", b"\r\n", b"\r", b"nan", b"inf", b"1e308", b"-1",
          b"9" * 400, b"<", b">", b"&", b"&lol;", b"]]>", b"<!--", b"\"", b"'", b"{" * 64, b"[" * 64,
          b"\xc3\x28", b"\x80", b"#", b" ", b"\t", b",", b"=", b"n = 999999999", b"\x1b[2J", b"%s%n"]


def nasty_number():
    """A number as text: extreme, special, malformed or ordinary."""
    return st.one_of(st.sampled_from(NASTY_NUMBERS),
                     st.integers(-(2 ** 70), 2 ** 70).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.integers(0, 40).map(str))


def nasty_text(max_size: int = 20):
    return st.one_of(st.sampled_from(["", " ", "x", "../outside/sub.xml", "/etc/passwd", "/dev/zero", "\x00",
                                      "é", "名前", "a" * 300, "%n", "${HOME}", "-1", "nan", "…"]),
                     st.text(max_size=max_size))


# ----------------------------------------------------------------------------------- mutations
_BYTE_OPS = ("flip", "delete", "insert", "truncate", "duplicate", "bom", "replace")


@st.composite
def mutated_bytes(draw, data: bytes, max_ops: int = 3):
    """``data`` after 1 … ``max_ops`` random byte-level edits."""
    b = bytearray(data)
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(_BYTE_OPS))
        n = len(b)
        pos = draw(st.integers(0, max(n, 1) - 1)) if n else 0
        if op == "flip" and n:
            b[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "delete" and n:
            del b[pos:pos + draw(st.integers(1, 64))]
        elif op == "insert":
            b[pos:pos] = draw(st.sampled_from(CHUNKS))
        elif op == "truncate":
            del b[pos:]
        elif op == "duplicate" and n:
            k = draw(st.integers(1, 256))
            b[pos:pos] = b[pos:pos + k]
        elif op == "bom":
            b[0:0] = draw(st.sampled_from(BOMS))
        elif op == "replace" and n:
            b[pos] = draw(st.integers(0, 255))
    return bytes(b)


_NUM = re.compile(r"(?<![A-Za-z_0-9.])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


@st.composite
def mutated_text(draw, text: str, extra_lines=None, max_ops: int = 3):
    """``text`` after 1 … ``max_ops`` line or number edits: a number replaced by a nasty one, a
    line duplicated, deleted, swapped or replaced, or a line from ``extra_lines`` inserted."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(("number", "number", "dup", "del", "swap", "insert", "blank")))
        i = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if op == "number" and lines:
            nums = list(_NUM.finditer(lines[i]))
            if nums:
                m = nums[draw(st.integers(0, len(nums) - 1))]
                lines[i] = lines[i][:m.start()] + draw(nasty_number()) + lines[i][m.end():]
        elif op == "dup" and lines:
            lines.insert(i, lines[i])
        elif op == "del" and lines:
            del lines[i]
        elif op == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "insert" and extra_lines is not None:
            lines.insert(i, draw(extra_lines))
        elif op == "blank" and lines:
            lines[i] = draw(st.sampled_from(["", " ", "\t", "#", "\x00", "\ufeff"]))
    return "\n".join(lines)


def deep(depth: int, open_tag: str = "<x>", close_tag: str = "</x>") -> str:
    return open_tag * depth + close_tag * depth


_DOCTYPES = [
    # billion laughs (small: each level ten times the one before)
    '<!DOCTYPE m [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
    '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
    '<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY lol "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]>',
    '<!DOCTYPE m [<!ENTITY lol SYSTEM "file:///etc/passwd">]>',                       # XXE
    '<!DOCTYPE m [<!ENTITY % p SYSTEM "file:///etc/hostname"> %p;]>',                 # parameter entity
    '<!DOCTYPE m [<!ENTITY lol "x">]>',
    '<!DOCTYPE m SYSTEM "http://127.0.0.1:9/none.dtd">',
]


@st.composite
def mutated_xml(draw, text: str, max_ops: int = 3) -> bytes:
    """An XML document after structure-aware edits (deep nesting, entities and DOCTYPEs, attribute
    values, duplicated / deleted / renamed elements, encoding declarations), then maybe a BOM, a
    re-encoding or byte edits."""
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(("deep", "entity", "attr", "attr", "dup", "del", "rename", "encoding",
                                   "text", "comment")))
        tags = [m for m in re.finditer(r"<([A-Za-z_][\w:.-]*)\b[^<>]*?(/?)>", text)]
        if op == "deep" and tags:
            m = tags[draw(st.integers(0, len(tags) - 1))]
            name = draw(st.sampled_from(["x", "apply", "math", "listOfSpecies", "node", m.group(1)]))
            d = draw(st.sampled_from([30, 1001, 5000, 60000]))
            text = text[:m.end()] + deep(d, f"<{name}>", f"</{name}>") + text[m.end():]
        elif op == "entity":
            dt = draw(st.sampled_from(_DOCTYPES))
            decl = re.match(r"\s*<\?xml[^>]*\?>", text)
            at = decl.end() if decl else 0
            text = text[:at] + dt + text[at:]
            if tags:
                m = tags[draw(st.integers(0, len(tags) - 1))]
                if not m.group(2):
                    text = text.replace(m.group(0), m.group(0) + "&lol;", 1)
        elif op == "attr":
            vals = list(re.finditer(r'="([^"]*)"', text))
            if vals:
                m = vals[draw(st.integers(0, len(vals) - 1))]
                new = draw(st.one_of(nasty_number(), nasty_text()))
                new = new.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
                text = text[:m.start(1)] + new + text[m.end(1):]
        elif op == "dup" and tags:
            m = [t for t in tags if t.group(2)] or tags
            m = m[draw(st.integers(0, len(m) - 1))]
            text = text[:m.end()] + m.group(0) + text[m.end():]
        elif op == "del" and tags:
            m = tags[draw(st.integers(0, len(tags) - 1))]
            text = text[:m.start()] + text[m.end():]
        elif op == "rename" and tags:
            m = tags[draw(st.integers(0, len(tags) - 1))]
            text = text[:m.start(1)] + draw(st.sampled_from(["x", "sbml", "model", "ci", "cn", "a:b"])) + \
                text[m.end(1):]
        elif op == "encoding":
            text = re.sub(r'encoding="[^"]*"', f'encoding="{draw(st.sampled_from(["UTF-16", "latin-1", "nope"]))}"',
                          text, count=1)
        elif op == "text":
            cns = list(re.finditer(r">([^<>]+)<", text))
            if cns:
                m = cns[draw(st.integers(0, len(cns) - 1))]
                text = text[:m.start(1)] + draw(nasty_number()) + text[m.end(1):]
        elif op == "comment":
            at = draw(st.integers(0, len(text)))
            text = text[:at] + "<!-- " + "x" * draw(st.sampled_from([1, 1000])) + " -->" + text[at:]
    data = text.encode("utf-8")
    how = draw(st.sampled_from(("plain", "plain", "bom", "utf16", "bytes")))
    if how == "bom":
        data = BOMS[0] + data
    elif how == "utf16":
        data = text.encode("utf-16")
    elif how == "bytes":
        data = draw(mutated_bytes(data, 2))
    return data


# ----------------------------------------------------------------------------------- edge lists
@st.composite
def edge_list(draw) -> bytes:
    """An edge list: maybe a ``# n = …`` header, ``u v`` or ``u v w`` lines (ids and weights mostly
    valid, sometimes nasty), comments, blank and garbage lines; maybe byte edits."""
    lines = []
    n = draw(st.integers(1, 12))
    if draw(st.booleans()):
        val = draw(st.one_of(st.integers(0, 20).map(str), nasty_number()))
        lines.append(draw(st.sampled_from(["# n = {}", "#n={}", "# g: n = {}, m = 3", "# n={} n=2", "% n = {}",
                                           "# N = {}"])).format(val))
    weighted = draw(st.booleans())
    ident = st.one_of(st.integers(0, n - 1).map(str), st.integers(0, n - 1).map(str), nasty_number())
    weight = st.one_of(st.floats(0, 10).map(repr), st.floats(0, 10).map(repr), nasty_number())
    sep = draw(st.sampled_from([" ", "\t", "  ", ",", " \t "]))
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["edge"] * 6 + ["comment", "blank", "garbage", "cols"]))
        if kind == "edge":
            parts = [draw(ident), draw(ident)] + ([draw(weight)] if weighted else [])
            lines.append(sep.join(parts) + draw(st.sampled_from(["", "", " # c", "  "])))
        elif kind == "comment":
            lines.append("# " + draw(st.one_of(nasty_text(), st.just("n = 5"))))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "   ", "\t"])))
        elif kind == "garbage":
            lines.append(draw(nasty_text(40)))
        else:
            lines.append(" ".join(draw(ident) for _ in range(draw(st.sampled_from([1, 4, 7])))))
    data = draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 3)) == 0:
        data = draw(mutated_bytes(data))
    return data


# ----------------------------------------------------------------------------------- GraphML
@st.composite
def graphml(draw) -> bytes:
    """A GraphML document: ``key`` declarations (weight, x, y; types right and wrong), nodes with
    ids (duplicates, dangling), edges with data (numbers, nasty values, missing), maybe nested
    graphs or hyperedges; then maybe XML or byte damage."""
    directed = draw(st.sampled_from(["undirected", "directed", "sideways"]))
    ids = draw(st.lists(st.one_of(st.integers(0, 9).map(lambda i: f"n{i}"), nasty_text(6)), min_size=0, max_size=8))
    keys = []
    for k, dom in (("weight", "edge"), ("x", "node"), ("y", "node")):
        if draw(st.integers(0, 3)):
            typ = draw(st.sampled_from(["double", "double", "int", "long", "float", "string", "boolean", "bogus"]))
            keys.append(f'<key id="{k}" for="{dom}" attr.name="{k}" attr.type="{typ}"/>')
    body = []
    val = st.one_of(st.floats(-5, 50).map(repr), nasty_number(), nasty_text(8))
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")  # noqa: E731
    for i in ids:
        data = "".join(f'<data key="{k}">{esc(draw(val))}</data>' for k in ("x", "y") if draw(st.booleans()))
        body.append(f'<node id="{esc(i)}">{data}</node>')
    pool = ids + ["ghost"]
    for _ in range(draw(st.integers(0, 10))):
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        data = f'<data key="weight">{esc(draw(val))}</data>' if draw(st.booleans()) else ""
        body.append(f'<edge source="{esc(a)}" target="{esc(b)}">{data}</edge>')
    extra = draw(st.sampled_from(["", "", "", '<graph id="inner" edgedefault="directed"><node id="q"/></graph>',
                                  '<hyperedge><endpoint node="n0"/><endpoint node="n1"/></hyperedge>',
                                  '<node id="p"><port name="a"/></node>']))
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">' + "".join(keys) +
            f'<graph id="G" edgedefault="{directed}">' + "".join(body) + extra + "</graph></graphml>")
    if draw(st.integers(0, 2)) == 0:
        return draw(mutated_xml(text, 2))
    return text.encode("utf-8")


# ----------------------------------------------------------------------------------- .npz / .npy
def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def npy_with_header(shape, descr: str = "<f8", data: bytes = b"") -> bytes:
    """An ``.npy`` stream whose header claims ``shape`` / ``descr``, followed by ``data`` (a header
    that lies about the size of what follows)."""
    hdr = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + data


VALID_PARAMS = {"m": 1.0, "b": 1.0, "u": 1.0, "K": 1.0, "dx": 1.0, "dt": 0.01}


@st.composite
def ch_array(draw):
    """A small array as the bytes of an ``.npy`` member: usually a square / cubic float field,
    sometimes the wrong shape, dtype, or a header that lies."""
    kind = draw(st.sampled_from(["field"] * 5 + ["shape", "dtype", "lie", "nan"]))
    size = draw(st.sampled_from([8, 8, 16, 4, 9]))
    if kind == "field":
        dim = draw(st.sampled_from([2, 2, 3]))
        dt = draw(st.sampled_from(["<f8", "<f4", ">f8", "<f2", "<i4"]))
        return npy_bytes(np.random.default_rng(draw(st.integers(0, 99))).uniform(-1, 1, (size,) * dim).astype(dt))
    if kind == "shape":
        shape = draw(st.lists(st.integers(0, 9), min_size=0, max_size=5))
        return npy_bytes(np.zeros(shape))
    if kind == "dtype":
        dt = draw(st.sampled_from(["<c16", "<U3", "|b1", "<M8[s]", "|V8", "<u8", "|S4"]))
        return npy_bytes(np.zeros((size, size), dtype=dt))
    if kind == "nan":
        a = np.zeros((size, size))
        a[0, 0] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e308]))
        return npy_bytes(a)
    shape = draw(st.sampled_from([(2 ** 20, 2 ** 20), (8, 8), (65536, 65536, 65536), (2 ** 62,), (-8, 8),
                                  (8, 8, 8, 8)]))
    descr = draw(st.sampled_from(["<f8", "<f4", "|O", "<c8", "bogus", "<f8'"]))
    return npy_with_header(shape, descr, b"\0" * draw(st.sampled_from([0, 64, 512])))


def params_json_member(doc) -> bytes:
    return npy_bytes(np.array(doc if isinstance(doc, str) else json.dumps(doc)))


@st.composite
def json_value(draw, depth: int = 2):
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 70), 2 ** 70), st.floats(), nasty_text(8))
    if depth <= 0:
        return draw(leaf)
    return draw(st.one_of(leaf, st.lists(json_value(depth - 1), max_size=3),
                          st.dictionaries(nasty_text(6), json_value(depth - 1), max_size=3)))


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def zip_bytes(members: dict, compress: bool = True) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def lie_about_sizes(data: bytes, size: int = 0xFFFFFFF0) -> bytes:
    """A zip whose central directory claims ``size`` uncompressed bytes for every member."""
    b = bytearray(data)
    i = b.find(b"PK\x01\x02")
    while i >= 0:
        b[i + 24:i + 28] = struct.pack("<I", size)
        i = b.find(b"PK\x01\x02", i + 4)
    return bytes(b)


def patch_zip_headers(data: bytes, encrypted: bool = False, method: int | None = None) -> bytes:
    """A zip whose members claim to be encrypted (general-purpose flag bit 0) and/or compressed
    with ``method`` (e.g. 99 = AES, 12 = bzip2, 14 = LZMA, 7 = unknown), in both the local and the
    central headers."""
    b = bytearray(data)
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        i = b.find(sig)
        while i >= 0:
            if encrypted:
                b[i + flag_at] |= 1
            if method is not None:
                b[i + method_at:i + method_at + 2] = struct.pack("<H", method)
            i = b.find(sig, i + 4)
    return bytes(b)


def zip_damage(draw, data: bytes) -> bytes:
    """Maybe damage a zip: byte edits, lying sizes, an encryption flag, an unsupported method."""
    how = draw(st.sampled_from(["plain"] * 9 + ["bytes", "bytes", "lie", "encrypted", "method"]))
    if how == "bytes":
        return draw(mutated_bytes(data))
    if how == "lie":
        return lie_about_sizes(data)
    if how == "encrypted":
        return patch_zip_headers(data, encrypted=True)
    if how == "method":
        return patch_zip_headers(data, method=draw(st.sampled_from([99, 12, 14, 7, 1])))
    return data


@st.composite
def ch_field_file(draw) -> tuple[str, bytes]:
    """(suffix, bytes) of a Cahn–Hilliard field file: an ``.npz`` with ``phi``, ``params_json``,
    ``t``, ``steps`` (each maybe missing, wrong or extra), or a bare ``.npy``; maybe byte edits,
    lying zip sizes or a member that is not what its name says."""
    if draw(st.integers(0, 5)) == 0:
        data = draw(ch_array())
        return ".npy", (draw(mutated_bytes(data)) if draw(st.booleans()) else data)
    members = {}
    if draw(st.integers(0, 6)):
        members["phi.npy"] = draw(ch_array())
    if draw(st.integers(0, 3)):
        params = dict(VALID_PARAMS)
        for _ in range(draw(st.integers(0, 2))):
            k = draw(st.sampled_from(sorted(VALID_PARAMS) + ["size", "dim", "zzz", "seed"]))
            params[k] = draw(st.one_of(json_value(1), nasty_number().map(lambda s: s)))
        doc = draw(st.one_of(st.just(params), st.just(params), json_value(2), st.just(deep_json(5000)),
                             st.just("{" * 3), st.just("9" * 5000)))
        members["params_json.npy"] = params_json_member(doc)
    for name in ("t", "steps", "format_version"):
        if draw(st.booleans()):
            members[f"{name}.npy"] = npy_bytes(np.array(draw(st.sampled_from([0, 1, -1, 2.5, np.nan, 10 ** 18]))))
    if draw(st.integers(0, 4)) == 0:
        members[draw(st.sampled_from(["../evil.npy", "/abs.npy", "extra.npy", "phi", "phi.npy/x.npy"]))] = \
            draw(ch_array())
    return ".npz", zip_damage(draw, zip_bytes(members, draw(st.booleans())))


# ----------------------------------------------------------------------------------- sessions
@st.composite
def session_file(draw) -> bytes:
    """A ``.gsession`` zip: ``manifest.json`` (valid, damaged, deep or huge) and ``data.npz``."""
    arrays = draw(st.lists(st.sampled_from(["field", "edges", "traces", "../x"]), max_size=3, unique=True))
    manifest = {"format": draw(st.sampled_from(["gsession"] * 8 + ["other", 5])),
                "version": draw(st.sampled_from([1] * 8 + [0, 2, "1", 1.5, None, 10 ** 30])),
                "workspace": draw(st.sampled_from(["cahn_hilliard", "graphs", "flint", "", 3])),
                "state": draw(st.one_of(st.just({}), st.dictionaries(nasty_text(6), json_value(1), max_size=3),
                                        json_value(1))),
                "arrays": draw(st.one_of(st.just(arrays), json_value(1)))}
    text = json.dumps(manifest)
    kind = draw(st.sampled_from(["json"] * 8 + ["deep", "bigint", "bom", "mut", "nan"]))
    if kind == "deep":
        text = text.replace('"state": {}', '"state": {"a": ' + deep_json(draw(st.sampled_from([100, 10 ** 5]))) + "}")
    elif kind == "bigint":
        text = text[:-1] + ', "big": ' + "9" * draw(st.sampled_from([4000, 5000, 100000])) + "}"
    elif kind == "nan":
        text = text[:-1] + ', "x": NaN, "y": Infinity}'
    members = {}
    if draw(st.integers(0, 12)):
        mbytes = text.encode("utf-8")
        if kind == "bom":
            mbytes = BOMS[0] + mbytes
        elif kind == "mut":
            mbytes = draw(mutated_bytes(mbytes))
        members["manifest.json"] = mbytes
    if arrays and draw(st.integers(0, 3)):
        inner = {f"{a}.npy": draw(ch_array()) for a in arrays if draw(st.integers(0, 8))}
        members["data.npz"] = zip_damage(draw, zip_bytes(inner)) if draw(st.integers(0, 4)) else draw(ch_array())
    return zip_damage(draw, zip_bytes(members, draw(st.booleans())))


# ----------------------------------------------------------------------------------- presets
@st.composite
def presets_file(draw) -> bytes:
    """A presets JSON file: valid presets with wrong types, missing or unknown keys, duplicate
    names; or deep nesting, huge integers, BOMs, NaN, byte edits."""
    presets = []
    for i in range(draw(st.integers(0, 3))):
        p = {"name": f"p{i}", "description": "d", "paper": "000", "params": {"size": 64}}
        for _ in range(draw(st.integers(0, 2))):
            k = draw(st.sampled_from(["name", "description", "paper", "params", "params_cpu", "other"]))
            if draw(st.booleans()):
                p.pop(k, None)
            else:
                p[k] = draw(json_value(1))
        presets.append(p)
    doc = draw(st.one_of(st.just({"presets": presets}), st.just({"presets": presets}), json_value(2)))
    text = json.dumps(doc)
    kind = draw(st.sampled_from(["json"] * 3 + ["deep", "bigint", "bom", "mut", "nan", "dupkey", "utf16"]))
    if kind == "deep":
        text = '{"presets": ' + deep_json(draw(st.sampled_from([500, 5000, 10 ** 5]))) + "}"
    elif kind == "bigint":
        text = '{"presets": [], "x": ' + "9" * draw(st.sampled_from([4301, 10 ** 5])) + "}"
    elif kind == "nan":
        text = '{"presets": [{"name": "a", "description": "", "paper": "", "params": {"x": NaN}}]}'
    elif kind == "dupkey":
        text = '{"presets": [], "presets": 5}'
    data = text.encode("utf-8")
    if kind == "bom":
        data = BOMS[0] + data
    elif kind == "utf16":
        data = text.encode("utf-16")
    elif kind == "mut":
        data = draw(mutated_bytes(data))
    return data


# ----------------------------------------------------------------------------------- sweep CSVs
@st.composite
def sweep_csv(draw, valid: bytes) -> bytes:
    """A mutation of a valid sweep result file: the identity line's JSON edited, rows torn,
    duplicated, dropped or given nasty cells, lines made huge, BOMs, byte edits."""
    text = valid.decode("utf-8")
    kind = draw(st.sampled_from(["rows", "rows", "ident", "bytes", "huge", "bom", "empty", "header_only"]))
    if kind == "rows":
        return draw(mutated_text(text, extra_lines=st.one_of(nasty_text(40), st.just("0," * 50)), max_ops=3)).encode()
    if kind == "ident":
        first, rest = text.split("\n", 1)
        ident = json.loads(first[len("# gse-sweep "):])
        k = draw(st.sampled_from(sorted(ident) + ["zzz"]))
        ident[k] = draw(json_value(1))
        return ("# gse-sweep " + json.dumps(ident) + "\n" + rest).encode()
    if kind == "bytes":
        return draw(mutated_bytes(valid))
    if kind == "huge":
        return valid + b"0," + b"9" * draw(st.sampled_from([10 ** 5, 2 * 10 ** 6])) + b"\n"
    if kind == "bom":
        return BOMS[0] + valid
    if kind == "empty":
        return b""
    return valid.split(b"\n", 2)[0] + b"\n"


# ----------------------------------------------------------------------------------- zip bombs
def zip_bomb(name: str = "phi.npy", side: int = 16384, chunk_mb: int = 16) -> bytes:
    """A zip (~2 MB) with one ``.npy`` member, a ``side`` × ``side`` float64 field of zeros that
    inflates to side² × 8 bytes (16384: 2 GiB).  Built from one deflated chunk of zeros repeated
    (each ends with a full flush, so copies decode independently); the CRC is left 0 (a reader
    that inflates first finds out only at the end)."""
    import zlib
    header = npy_with_header((side, side), "<f8")
    total = side * side * 8
    chunk = chunk_mb << 20
    assert total % chunk == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(chunk)
    middle = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    assert again == middle
    body = first + middle * (total // chunk) + c.flush()
    usize = len(header) + total
    fname = name.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, 0, len(body), usize, len(fname), 0) + fname
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, 0, len(body), usize,
                          len(fname), 0, 0, 0, 0, 0, 0) + fname
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(body), 0)
    return local + body + central + end
