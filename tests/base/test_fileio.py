"""kernels.fileio: outputs are whole or absent, paths are checked before work."""
import os

import numpy as np
import pytest

from kernels.errors import InvalidParameter
from kernels.fileio import atomic_path, atomic_write, check_output_path, write_text


def test_atomic_write_replaces_only_on_success(tmp_path):
    p = tmp_path / "out.csv"
    p.write_text("old complete file\n")
    with pytest.raises(RuntimeError):
        with atomic_write(p, "w") as fh:
            fh.write("half a ro")
            raise RuntimeError("disk full")
    assert p.read_text() == "old complete file\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]          # no temporary file left
    with atomic_write(p, "w") as fh:
        fh.write("new\n")
    assert p.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]


def test_atomic_write_keyboard_interrupt_keeps_old_file(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"\x01\x02")
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(p) as fh:
            fh.write(b"\xff" * 100)
            raise KeyboardInterrupt
    assert p.read_bytes() == b"\x01\x02"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_atomic_path_keeps_suffix_and_mode(tmp_path):
    p = tmp_path / "d.npy"
    p.write_bytes(b"x")
    os.chmod(p, 0o640)
    rng = np.random.default_rng()
    a = rng.integers(0, 100, size=(7, 5))
    with atomic_path(p) as tmp:
        assert tmp.suffix == ".npy" and tmp.parent == tmp_path
        np.save(tmp, a)
    assert np.array_equal(np.load(p), a)
    assert os.stat(p).st_mode & 0o777 == 0o640
    # a writer that writes nothing (or somewhere else) does not truncate the destination
    with pytest.raises(OSError):
        with atomic_path(p):
            pass
    assert np.array_equal(np.load(p), a)
    assert os.listdir(tmp_path) == ["d.npy"]


def test_write_text_new_file_mode_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        q = write_text(tmp_path / "n.txt", "hi")
    finally:
        os.umask(old)
    assert q.read_text() == "hi" and os.stat(q).st_mode & 0o777 == 0o640


@pytest.mark.parametrize("make, exts, fragment", [
    (lambda d: d / "missing" / "x.png", None, "does not exist"),
    (lambda d: d, None, "is a folder"),
    (lambda d: d / "x.txt", (".png",), "use .png"),
    (lambda d: d / "x", (".png", ".tif"), "no extension"),
    (lambda d: "", None, "empty"),
])
def test_check_output_path_refuses(tmp_path, make, exts, fragment):
    with pytest.raises(InvalidParameter, match=fragment):
        check_output_path(make(tmp_path), exts)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_output_path_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    with pytest.raises(InvalidParameter, match="not writable"):
        check_output_path(ro / "a.csv")


def test_check_output_path_accepts_case_insensitive_suffix(tmp_path):
    assert check_output_path(tmp_path / "A.PNG", (".png",)) == tmp_path / "A.PNG"
    assert not (tmp_path / "A.PNG").exists()
