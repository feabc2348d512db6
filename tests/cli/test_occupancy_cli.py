"""Headless CLI: python main.py occupancy … (same calculator as the GUI).  The issue's example runs
as ``main.py`` in a process of its own; the other calls run ``cli.main`` in this process."""
import json

import pytest
from support.cli_calls import cli as main_py
from support.cli_calls import cli_here


def cli(*args):
    return cli_here("occupancy", *args)


def test_issue_example_json():
    r = main_py("occupancy", "--cc", "9.0", "--threads", "256", "--regs", "64", "--smem", "16384", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # 64 regs → 2048 per warp → 8 warps per sub-partition → 32 warps → 4 blocks of 8 warps; 32/64
    assert out["active_blocks_per_sm"] == 4 and out["active_warps_per_sm"] == 32
    assert out["occupancy"] == 0.5 and out["limiter"] == "registers"
    assert out["limits"] == {"warps": 8, "blocks": 32, "registers": 4, "shared_memory": 13}
    assert out["smem_per_block"] == 16384 + 1024


def test_paper_era_cc_and_curves():
    r = cli("--cc", "1.3", "--threads", "64", "--regs", "40", "--static-smem", "4408", "--json", "--curves")
    out = json.loads(r.stdout)
    assert out["active_warps_per_sm"] == 6 and out["limiter"] == "shared_memory"   # paper 004 Table 4.4
    c = out["curves"]
    assert c["threads"]["x"][0] == 32 and c["threads"]["x"][-1] == 512
    assert len(c["regs"]["x"]) == len(c["regs"]["occupancy"])


def test_human_readable_output_marks_the_limiter():
    r = cli("--cc", "8.6", "--threads", "256", "--regs", "64")
    assert r.returncode == 0
    assert "registers: 4  <- limiter" in r.stdout and "66.7%" in r.stdout


def test_list_ccs():
    r = cli("--list-ccs", "--json")
    ccs = [row["cc"] for row in json.loads(r.stdout)]
    assert ccs[0] == "1.0" and ccs[-1] == "12.0" and "9.0" in ccs


@pytest.mark.parametrize("args,needle", [
    (("--cc", "4.2"), "unknown compute capability '4.2'"),
    (("--cc", "9.0", "--threads", "2000"), "2000 threads per block exceed the CC 9.0 limit of 1024"),
    (("--cc", "9.0", "--threads", "1024", "--regs", "72"), "73728 registers per block"),
    (("--cc", "9.0", "--regs", "300"), "300 registers per thread exceed"),
    (("--cc", "8.6", "--smem", "200000"), "exceeds the CC 8.6 limit of 102400 B"),
    (("--cc", "9.0", "--threads", "abc"), "--threads must be an integer"),
    (("--cc", "9.0", "--carveout", "150"), "percentage"),
])
def test_bad_input_one_error_line_exit_2(args, needle):
    r = cli(*args)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert needle in lines[0]
    assert r.stdout == ""


def test_no_cc_without_gpu_says_why():
    from kernels.backend import gpu_available
    if gpu_available()[0]:
        pytest.skip("a GPU is present here")
    r = cli()
    assert r.returncode == 2 and r.stderr.startswith("error:") and "--cc" in r.stderr
