"""The file gate (kernels/filegate.py) and the readers routed through it (issue 35).

Each defence gets a crafted input — a FIFO, /dev/zero (also through a symlink), a folder, a file
over its size limit, a file that grows while read, BOM-prefixed deep XML without an XML suffix,
entity declarations, an archive member that declares gigabytes, an encrypted member, an
unsupported compression, a damaged .npy header, deep JSON — and must give one project error
(kernels.errors), through the library and through the CLI (one ``error:`` line, exit 2).  Also the
process hygiene: stale ``.part`` files removed, compiles inside the cache's own file system.
"""
from __future__ import annotations

import codecs
import fcntl
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kernels import filegate
from kernels.errors import ExplorerError, InvalidParameter
from support.paths import ROOT

DEPTH = filegate.MAX_XML_DEPTH


def deep_xml(depth: int) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<sbml>' + "<a>" * depth + "</a>" * depth + "</sbml>"


def run_cli(argv, capsys) -> tuple[int, list[str]]:
    """In-process CLI run: (exit status, stderr lines)."""
    from cli import main
    status = main([str(a) for a in argv])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    return status, err


def assert_one_error(status, err, fragment: str) -> None:
    assert status == 2, err
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert fragment in err[0], err
    assert "Traceback" not in err[0] and "unexpected" not in err[0], err


# ------------------------------------------------------------------------------ regular files only
@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "model.xml"
    os.mkfifo(p)
    return p


@pytest.fixture
def zero_link(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    p = tmp_path / "zero.csv"
    p.symlink_to("/dev/zero")
    return p


@pytest.mark.parametrize("reader", [
    lambda p: filegate.read_bytes(p, filegate.MODEL),
    lambda p: filegate.open_text(p, filegate.CSV),
    lambda p: filegate.check_file(p, filegate.JSON_FILE),
])
def test_fifo_device_and_folder_are_refused_before_reading(reader, fifo, zero_link, tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(InvalidParameter, match="FIFO"):
        reader(fifo)
    with pytest.raises(InvalidParameter, match="a device"):
        reader(zero_link)
    with pytest.raises(InvalidParameter, match="Is a directory, not a file"):
        reader(tmp_path)
    assert time.perf_counter() - t0 < 5                  # no hang, no endless read


def test_every_reader_refuses_a_fifo_and_dev_zero(fifo, zero_link, tmp_path):
    from explorer.presets import PresetError, load_presets
    from explorer.session import SessionError, load_session
    from kernels.cahn_hilliard.io import load_field
    from kernels.flint.loaders import load_model
    from kernels.graphs.data.graph import load_graph
    from kernels.sweep.results import read_header, read_rows
    readers = [load_model, load_graph, read_header, read_rows, load_field]
    for target in (fifo, zero_link):
        for read in readers:
            with pytest.raises(InvalidParameter, match="not a file .only regular files are read"):
                read(target)
        with pytest.raises(SessionError, match="only regular files are read"):
            load_session(target)
    graphml = tmp_path / "g.graphml"
    graphml.symlink_to("/dev/zero")
    with pytest.raises(InvalidParameter, match="a device"):
        load_graph(graphml)
    presets = tmp_path / "presets"
    presets.mkdir()
    os.mkfifo(presets / "ch.json")
    with pytest.raises(PresetError, match="FIFO"):
        load_presets("ch", presets)


def test_cli_fifo_model_and_dev_zero_resume(fifo, zero_link, capsys):
    assert_one_error(*run_cli(["flint", fifo, "--t-end", "1"], capsys), "FIFO")
    assert_one_error(*run_cli(["flint", zero_link, "--t-end", "1"], capsys), "a device")
    assert_one_error(*run_cli(["graph", "--load", zero_link], capsys), "a device")


# ------------------------------------------------------------------------------ size limits, bounded reads
def test_size_limit_is_read_before_reading_and_named(tmp_path, monkeypatch, rng):
    p = tmp_path / "big.json"
    n = int(rng.integers(3000, 6000))
    p.write_text(json.dumps(["x" * n]))
    monkeypatch.setenv("GSE_MAX_JSON_MB", repr(1000 / 2**20))         # 1000 bytes
    with pytest.raises(InvalidParameter, match="GSE_MAX_JSON_MB"):
        filegate.read_json(p)
    monkeypatch.setenv("GSE_MAX_JSON_MB", "1")
    assert filegate.read_json(p) == ["x" * n]
    for bad in ("nan", "-1", "0", "1e400", "abc"):
        monkeypatch.setenv("GSE_MAX_JSON_MB", bad)
        with pytest.raises(InvalidParameter, match="GSE_MAX_JSON_MB"):
            filegate.read_json(p)


def test_a_file_that_grows_while_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GSE_MAX_CSV_MB", repr(4096 / 2**20))
    p = tmp_path / "grow.csv"
    p.write_text("a,b\n" * 100)                                     # 400 bytes: within the limit
    fh = filegate.open_text(p, filegate.CSV)
    with open(p, "a") as out:
        out.write("1,2\n" * 5000)                                   # grows to 20 kB after the check
    with fh, pytest.raises(InvalidParameter, match="grew past"):
        for _line in fh:
            pass


def test_model_limit_flag_still_works(tmp_path, capsys):
    p = tmp_path / "m.flint"
    p.write_text("# " + "x" * (2 << 20) + "\n")
    before = os.environ.get("GSE_MAX_MODEL_MB")
    assert_one_error(*run_cli(["flint", p, "--max-model-mb", "1", "--t-end", "1"], capsys), "--max-model-mb")
    assert os.environ.get("GSE_MAX_MODEL_MB") == before           # set for the command's workers only


# ------------------------------------------------------------------------------ XML
@pytest.mark.parametrize("bom,enc", [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                                     (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF32_LE, "utf-32-le"),
                                     (b"", "utf-16-le")])
def test_deep_xml_with_a_bom_and_no_xml_suffix_is_refused(tmp_path, bom, enc, rng):
    from kernels.flint.loaders import load_model
    depth = DEPTH + int(rng.integers(1, 50))
    p = tmp_path / "model.dat"                                       # no XML suffix
    p.write_bytes(bom + deep_xml(depth).replace("UTF-8", enc.upper()[:6]).encode(enc))
    with pytest.raises(InvalidParameter, match=f"nested more than {DEPTH} deep"):
        load_model(p)
    ok = tmp_path / "shallow.dat"
    ok.write_bytes(bom + deep_xml(DEPTH - 5).encode(enc))
    assert filegate.read_xml(ok).count("<a>") == DEPTH - 5           # decoded, BOM gone
    assert not filegate.read_xml(ok).startswith("\ufeff")


def test_deep_xml_through_every_xml_reader(tmp_path, capsys):
    from kernels.flint.cellml import read_cellml
    from kernels.flint.sbml import read_sbml
    from kernels.flint.sbml.reference import load_reference
    from kernels.flint.sbml.system import read_sbml_system
    from kernels.graphs.data.graph import load_graph
    text = deep_xml(DEPTH + 1)
    p = tmp_path / "deep.sbml.txt"
    p.write_bytes(codecs.BOM_UTF8 + text.encode())
    g = tmp_path / "deep.graphml"
    g.write_bytes(codecs.BOM_UTF8 + text.encode())
    for call in (lambda: read_sbml(text), lambda: read_sbml_system(text), lambda: read_sbml_system(str(p)),
                 lambda: load_reference(p), lambda: read_cellml(text), lambda: load_graph(g)):
        with pytest.raises(InvalidParameter, match="nested more than"):
            call()
    assert_one_error(*run_cli(["flint", p, "--t-end", "1"], capsys), "nested more than")
    assert_one_error(*run_cli(["flint", p, "--runtime", "sbml", "--t-end", "1"], capsys), "nested more than")


def test_malformed_deep_xml_is_still_measured(tmp_path):
    text = "<sbml>" + "<a x='1'>" * (DEPTH + 10) + "<unclosed"            # expat stops early
    with pytest.raises(InvalidParameter, match="nested more than"):
        filegate.check_xml(text, "bad")
    assert filegate.check_xml("<sbml><a></b></sbml>", "ok") == "<sbml><a></b></sbml>"   # left to the reader


@pytest.mark.parametrize("doctype", ['<!DOCTYPE sbml [<!ENTITY a "aaaaaaaaaa">]>',
                                     '<!DOCTYPE sbml [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
                                     '<!DOCTYPE sbml [<!ENTITY % p "x">]>'])
def test_entity_declarations_are_refused(tmp_path, doctype):
    from kernels.flint.loaders import load_model
    from kernels.graphs.data.graph import load_graph
    body = f'<?xml version="1.0"?>\n{doctype}\n<sbml><model/></sbml>'
    for name in ("m.xml", "m.cellml", "m.model", "g.graphml"):
        p = tmp_path / name
        p.write_bytes(codecs.BOM_UTF16_LE + body.encode("utf-16-le"))
        read = load_graph if name.endswith("graphml") else load_model
        with pytest.raises(InvalidParameter, match="entit"):
            read(p)


# ------------------------------------------------------------------------------ archives
def patch_central(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """``data`` (one-member zip) with a field of its central directory entry overwritten."""
    i = data.rfind(b"PK\x01\x02")
    return data[:i + offset] + struct.pack(fmt, value) + data[i + offset + struct.calcsize(fmt):]


def small_npz(rng, members=("phi",)) -> bytes:
    buf = io.BytesIO()
    n = int(rng.integers(8, 16))
    np.savez_compressed(buf, **{m: rng.random((n, n)) for m in members})
    return buf.getvalue()


def test_member_declaring_gigabytes_is_refused_before_inflating(tmp_path, rng, capsys):
    from kernels.cahn_hilliard.io import load_field, read_field_header
    from explorer.session import SessionError, load_session
    huge = int(rng.integers(3 << 30, 4 << 30))
    bomb = patch_central(small_npz(rng), 24, "<I", huge)             # uncompressed size field
    assert len(bomb) < 5000
    p = tmp_path / "bomb.npz"
    p.write_bytes(bomb)
    for read in (load_field, read_field_header):
        with pytest.raises(InvalidParameter, match="GSE_MAX_ARCHIVE_MEMBER_MB"):
            read(p)
    s = tmp_path / "bomb.gsession"
    with zipfile.ZipFile(s, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "gsession", "version": 1, "workspace": "ch",
                                                 "state": {}, "arrays": ["phi"]}))
        z.writestr("data.npz", bomb)
    with pytest.raises(SessionError, match="declares"):
        load_session(s)
    assert_one_error(*run_cli(["ch", "--load", p, "--steps", "1"], capsys), "declares")


def test_encrypted_and_unsupported_members_have_their_own_error(tmp_path, rng):
    from kernels.cahn_hilliard.io import load_field
    from explorer.session import SessionError, load_session
    enc = tmp_path / "enc.npz"
    enc.write_bytes(patch_central(small_npz(rng), 8, "<H", 0x1))      # general purpose flag: encrypted
    with pytest.raises(InvalidParameter, match="is encrypted"):
        load_field(enc)
    bz = tmp_path / "bz.npz"
    with zipfile.ZipFile(bz, "w", compression=zipfile.ZIP_BZIP2) as z:
        z.writestr("phi.npy", small_npz(rng))
    with pytest.raises(InvalidParameter, match="compression method 12"):
        load_field(bz)
    sess = tmp_path / "enc.gsession"
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("manifest.json", "{}")
    sess.write_bytes(patch_central(raw.getvalue(), 8, "<H", 0x1))
    with pytest.raises(SessionError, match="is encrypted"):
        load_session(sess)


def test_damaged_npy_header_is_damaged_not_out_of_memory(tmp_path, rng):
    from kernels.cahn_hilliard.io import load_field
    n = int(rng.integers(8, 32))
    buf = io.BytesIO()
    np.save(buf, rng.random((n, n)))
    data = buf.getvalue()
    hlen = struct.unpack("<H", data[8:10])[0]
    head = data[10:10 + hlen].decode("latin-1")
    old, new = f"({n}, {n})", f"({n * 999}, {n * 999})"             # a damaged shape: 10⁹ cells claimed
    head = head.replace(old, new).replace(" " * (len(new) - len(old)) + "\n", "\n")
    assert len(head) == hlen
    data = data[:10] + head.encode("latin-1") + data[10 + hlen:]
    p = tmp_path / "damaged.npy"
    p.write_bytes(data)
    with pytest.raises(InvalidParameter, match="damaged|truncated") as exc:
        load_field(p)
    assert "memory" not in str(exc.value)


# ------------------------------------------------------------------------------ JSON, GUI loaders
def test_deep_json_and_library_failures_are_the_loaders_own_errors(tmp_path, monkeypatch, rng):
    from explorer import session as session_mod
    from explorer.presets import PresetError, load_presets
    deep = "[" * 200_000 + "]" * 200_000
    d = tmp_path / "presets"
    d.mkdir()
    (d / "ch.json").write_text(deep)
    with pytest.raises(PresetError, match="nested too deeply"):
        load_presets("ch", d)
    s = tmp_path / "deep.gsession"
    with zipfile.ZipFile(s, "w") as z:
        z.writestr("manifest.json", deep)
    with pytest.raises(session_mod.SessionError, match="nested too deeply"):
        session_mod.load_session(s)
    good = session_mod.save_session(tmp_path / "ok.gsession", "ch", {"a": 1}, {"phi": rng.random((4, 4))})
    assert session_mod.load_session(good)[1] == {"a": 1}
    for exc in (MemoryError, RecursionError, RuntimeError("bad"), zipfile.BadZipFile("x"), OverflowError("x")):
        def boom(*_a, exc=exc, **_k):
            raise exc
        monkeypatch.setattr(np.lib.format, "read_array", boom)
        with pytest.raises(session_mod.SessionError):
            session_mod.load_session(good)
        monkeypatch.setattr(filegate, "loads_json", boom)
        with pytest.raises(PresetError):
            load_presets("ch", d)
        monkeypatch.undo()


def test_sweep_header_line_is_bounded(tmp_path):
    from kernels.sweep.results import MAGIC, read_header
    p = tmp_path / "s.csv"
    p.write_text(MAGIC + "x" * (3 << 20))                           # one 3 MB line, no newline
    with pytest.raises(InvalidParameter, match="not a sweep result file"):
        read_header(p)


def test_damaged_sweep_csv_rows_and_identity(tmp_path, rng):
    from kernels.sweep.results import MAGIC, read_header, read_rows
    p = tmp_path / "s.csv"
    p.write_text(MAGIC + "5\npoint,x\n")                             # an identity that is not an object
    with pytest.raises(InvalidParameter, match="not a JSON object"):
        read_header(p)
    from kernels.sweep.results import ResultFile
    p.write_text(MAGIC + '{"task": "ch", "fixed": 1}\npoint,x\n')     # fixed: not an object
    with pytest.raises(InvalidParameter, match="different sweep .fixed parameters 1 there"):
        ResultFile(p, {"task": "ch", "fixed": {"n": 1}}, ["point", "x"], mode="resume").check()
    big = int(rng.integers(200_000, 300_000))                      # above the csv module's field limit
    p.write_text(MAGIC + '{"task": "ch"}\npoint,x\n0,1\n1,' + "9" * big + "\n")
    with pytest.raises(InvalidParameter, match="row 2 is damaged"):
        read_rows(p)


def test_damaged_member_header_and_npy_tokens(tmp_path, rng):
    from kernels.cahn_hilliard.io import load_field
    data = bytearray(small_npz(rng, ("t", "phi")))
    at = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("phi.npy").header_offset
    data[at + 3] = 0x05                                            # phi's local header signature, damaged
    p = tmp_path / "f.npz"
    p.write_bytes(bytes(data))
    with pytest.raises(InvalidParameter, match="'phi' is damaged"):
        load_field(p)
    hdr = b"{'descr': '<f8', 'fortran_order': False, 'shape': (8, 8), }    ), }"
    hdr += b" " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + b"\n"
    q = tmp_path / "f.npy"
    q.write_bytes(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr + bytes(512))
    with pytest.raises(InvalidParameter, match="not a readable array"):
        load_field(q)


def test_edge_list_negative_header_is_refused(tmp_path):
    from kernels.graphs.data.graph import load_graph
    p = tmp_path / "g.txt"
    p.write_text("# n = -5\n0 1\n")
    with pytest.raises(InvalidParameter, match="n = -5"):
        load_graph(p)


# ------------------------------------------------------------------------------ process hygiene
def test_stale_part_files_are_removed_and_live_ones_kept(tmp_path, rng):
    from kernels import fileio
    target = tmp_path / "field.npz"
    old = time.time() - 3600
    stale = tmp_path / ".field.abcd1234.part.npz"
    locked = tmp_path / ".field.efgh5678.part.npz"
    fresh = tmp_path / ".field.ijkl9012.part.npz"
    other = tmp_path / ".other.mnop3456.part.npz"
    for q in (stale, locked, other):
        q.write_bytes(b"x")
        os.utime(q, (old, old))
    fresh.write_bytes(b"x")                                          # written after this process started
    fd = os.open(locked, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)                                    # a writer still running
    try:
        data = bytes(rng.integers(0, 256, 64, dtype=np.uint8))
        fileio.write_bytes(target, data)
    finally:
        os.close(fd)
    assert target.read_bytes() == data
    assert not stale.exists() and locked.exists() and fresh.exists() and other.exists()


def test_a_killed_write_leaves_a_part_that_the_next_write_removes(tmp_path):
    target = tmp_path / "out.npz"
    code = ("import sys, time; from kernels.fileio import atomic_write\n"
            "with atomic_write(sys.argv[1]) as fh:\n"
            "    fh.write(b'x'); fh.flush(); print('ready', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(target)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.kill()
        child.wait()
    parts = list(tmp_path.glob(".out.*.part.npz"))
    assert len(parts) == 1 and not target.exists()
    time.sleep(0.05)                                                 # the next process starts after the kill
    code2 = "import sys; from kernels.fileio import write_bytes; write_bytes(sys.argv[1], b'done')"
    subprocess.run([sys.executable, "-c", code2, str(target)], cwd=ROOT, check=True, timeout=60)
    assert target.read_bytes() == b"done" and not list(tmp_path.glob(".out.*.part.npz"))


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None, reason="no C++ compiler")
def test_compile_happens_in_the_cache_file_system(tmp_path, monkeypatch, rng):
    from kernels import hostcc
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /tmp and the cache on different file systems")
    tmpdir = Path(os.path.join(shm, f"gse-test-{os.getpid()}"))
    tmpdir.mkdir()
    try:
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        monkeypatch.setattr("tempfile.tempdir", None)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        k = int(rng.integers(1, 1 << 30))
        lib = hostcc.compile_library(f'extern "C" int answer() {{ return {k}; }}', 120, kind="test", prefix="t")
        assert lib.answer() == k
        built = list((tmp_path / "cache" / "gpu-science-explorer" / "test").iterdir())
        assert [p.suffix for p in built] == [".so"]                    # no build folder left behind
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_project_errors_only(tmp_path):
    """Every refusal above is an ExplorerError (the GUI shows those in its message bar)."""
    for call in (lambda: filegate.read_bytes(tmp_path, filegate.MODEL),
                 lambda: filegate.check_xml("<!DOCTYPE a [<!ENTITY b 'c'>]><a/>", "x"),
                 lambda: filegate.loads_json("[" * 100000, "x")):
        with pytest.raises(ExplorerError):
            call()
