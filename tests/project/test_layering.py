"""kernels/ is the display-free compute library: importing all of it loads no Qt/VisPy/pyqtgraph."""
import pkgutil
import subprocess
import sys
from support.paths import ROOT as PROJECT_ROOT

ROOT = str(PROJECT_ROOT)


def test_kernels_import_no_gui_modules():
    import kernels
    names = [m.name for m in pkgutil.walk_packages(kernels.__path__, "kernels.")]
    assert "kernels.cahn_hilliard.simulation" in names and len(names) > 8
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PyQt6', 'PyQt5', 'PySide6', 'vispy', 'pyqtgraph'))\n"
        "print(','.join(bad))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"kernels/ pulled in GUI modules: {r.stdout.strip()}"


def test_cli_imports_no_gui_modules_even_when_exporting(tmp_path):
    """cli/ (every command module) and a whole `ch --export` run load no Qt, VisPy, pyqtgraph or explorer."""
    import cli
    names = [m.name for m in pkgutil.walk_packages(cli.__path__, "cli.")]
    assert {"cli.common", "cli.ch", "cli.flint_suite"} <= set(names)
    png = tmp_path / "f.png"
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        "import cli\n"
        f"rc = cli.main(['--backend', 'cpu', 'ch', '--size', '16', '--steps', '2', '--export', {str(png)!r}, '--json'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PyQt6', 'PyQt5', 'PySide6', 'vispy', 'pyqtgraph', 'explorer'))\n"
        "print(rc, ','.join(bad), file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "0", f"cli pulled in GUI modules: {r.stderr.strip()}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
