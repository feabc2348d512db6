"""The CLI's error contract on bad input (issue 19): a table of bad command lines and files.

For every case: exit status 2, exactly one stderr line and it starts with ``error:`` and holds the
expected fragment, no ``Traceback`` anywhere, the memory bounded, and a sentinel file placed
beforehand at every output path of the command line is byte-for-byte unchanged (for ``--out-dir``: a
folder whose one file is unchanged and alone).  The bad files are generated here.

Each case runs in this process through ``cli.main(argv)`` (how far it raises the peak RSS measured
through Linux's peak reset, under an address-space limit); a sample of them (every SAMPLE-th and the ones about
memory) runs again as a plain ``python main.py …`` that must answer the same, with its peak RSS
(``ru_maxrss`` from ``os.wait4``, RLIMIT_AS as a safety net so a regression cannot take the machine
down).  Also here: ``--debug``, ``--backend`` before and after the command, the blow-up save, and
Ctrl+C in the compiled Flint loop.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from support.cli_calls import run_case, run_plain
from support.paths import ROOT

PEAK_RSS_MB = 512                  # per child (ru_maxrss); a bad input must not grow memory
CASE_TIMEOUT = 90                  # s

D, O = "{d}", "{o}"                # the fixture folder; the case's own output folder (sentinels)

# (command line, expected fragment of the error line[, extra environment])
CASES = [
    # --- top level and argparse
    ("nosuch", "invalid choice: 'nosuch'"),
    ("--backend tpu ch", "invalid choice: 'tpu'"),
    ("ch --dim 4", "ch: argument --dim: invalid choice"),
    ("ch --unknown-flag", "unrecognized arguments: --unknown-flag"),
    ("ch --json extra", "unrecognized arguments: extra"),
    ("ch --initial file", "argument --initial: invalid choice"),
    ("ch --integrator heun", "argument --integrator: invalid choice"),
    # --- ch: numbers and parameters
    ("ch --size abc", "--size must be an integer"),
    ("ch --size 4 --steps 1", "size must be an integer ≥ 8"),
    ("ch --size 100000 --steps 1", "exceeds the supported maximum"),
    ("ch --dt -1", "dt must be a positive finite number"),
    ("ch --dt nan", "--dt must be a finite number"),
    ("ch --dt inf", "--dt must be a finite number"),
    ("ch --dx 1e-300", "underflows to 0"),
    ("ch --dx 0", "dx must be a positive finite number"),
    ("ch --m -1", "m must be a positive finite number"),
    ("ch --K nan", "--K must be a finite number"),
    ("ch --b -2", "b must be ≥ 0"),
    ("ch --u inf", "--u must be a finite number"),
    ("ch --boundary fixed --boundary-value nan", "--boundary-value must be a finite number"),
    ("ch --mean 5", "mean φ must be in"),
    ("ch --noise 20", "noise amplitude must be in"),
    ("ch --seed -1", "seed must be a non-negative integer"),
    ("ch --steps -5", "--steps must be ≥ 0"),
    ("ch --steps 1e3", "--steps must be an integer"),
    ("ch --record-every 0", "--record-every must be ≥ 1"),
    ("ch --record-every -5", "--record-every must be ≥ 1"),
    ("ch --integrator spectral --boundary fixed", "periodic boundaries"),
    ("ch --variant E --integrator euler", "kernel E fuses"),
    ("ch --variant E --size 1024 --steps 10000", "(limit 30 s", {}, "nogpu"),    # CUDA source on the CPU: guard
    ("ch --gpus 0", "gpus must be an integer from 1"),
    ("ch --gpus 100", "gpus must be an integer from 1"),
    ("ch --size 32 --dt 0.2 --steps 2000", "blew up"),
    # --- ch: outputs checked before work
    (f"ch --size 16 --steps 5 --colormap nope --export {O}/f.png", "unknown colormap 'nope'"),
    (f"ch --size 16 --steps 5 --export {O}/f.png --save-field {O}/f.npz --colormap jet", "unknown colormap"),
    (f"ch --size 16 --steps 5 --export {O}/img.txt", "'.txt'; use .png"),
    (f"ch --size 16 --steps 5 --export {O}/img", "no extension; use .png"),
    (f"ch --size 16 --steps 5 --save-field {O}/field.txt", "'.txt'; use .npz"),
    (f"ch --size 16 --steps 5 --save-field {O}/field", "no extension; use .npz"),
    ("ch --size 16 --steps 5 --export /nonexistent/dir/f.png", "does not exist"),
    (f"ch --size 16 --steps 5 --save-field {D}/folder.npz", "is a folder, not a file"),
    (f"ch --size 16 --dt -1 --save-field {O}/f.npz --export {O}/f.png", "dt must be"),
    # --- ch --load: bad field files
    (f"ch --load {D}/missing.npz", "no such file"),
    (f"ch --load {D}", "not a file"),
    (f"ch --load {D}/empty.npz", "is empty"),
    (f"ch --load {D}/trunc.npz", "damaged or truncated"),
    (f"ch --load {D}/str.npz", "not numbers"),
    (f"ch --load {D}/vec.npy", "square (2D) or cubic (3D)"),
    (f"ch --load {D}/list.npz", "holds a list, not an object"),
    (f"ch --load {D}/cplx.npz", "the field is complex"),
    (f"ch --load {D}/cplx.npz --save-field {O}/out.npz", "the field is complex"),
    (f"ch --load {D}/cube.npz --dim 2 --size 256", "--dim 2 disagrees with the loaded field"),
    (f"ch --load {D}/cube.npz --size 32", "--size 32 disagrees with the loaded field"),
    (f"ch --load {D}/huge_hdr.npz --dtype float64", "GiB"),
    (f"ch --load {D}/tib.npz", "exceeds the supported maximum"),
    (f"ch --load {D}/rect.npz", "square (2D) or cubic (3D)"),
    (f"ch --load {D}/d4.npz", "square (2D) or cubic (3D)"),
    (f"ch --load {D}/nan.npz", "NaN or Inf"),
    (f"ch --load {D}/nophi.npz", "holds no field 'phi'"),
    (f"ch --load {D}/obj.npz", "not numbers"),
    (f"ch --load {D}/notzip.npz", "is not a field file"),
    (f"ch --load {D}/badjson.npz", "unreadable parameters"),
    (f"ch --load {D}/badtypes.npz", "unreadable parameters"),
    (f"ch --load {D}/tiny.npz", "size must be an integer ≥ 8"),
    (f"ch --load {D}/trunc_member.npz", "is truncated"),
    (f"ch --load {D}/trunc.npy", "is truncated"),
    # --- graph: numbers
    ("graph --seed -1", "--seed must be ≥ 0"),
    ("graph --generator alpha --alpha nan", "--alpha must be a finite number"),
    ("graph --generator alpha --alpha inf", "--alpha must be a finite number"),
    ("graph --generator ws --p nan", "--p must be a finite number"),
    ("graph --n 1", "--n must be ≥ 2"),
    ("graph --n abc", "--n must be an integer"),
    ("graph --k abc", "--k must be an integer"),
    ("graph --generator ring --n 10 --k 10", "k must be smaller"),
    ("graph --generator ws --p -0.5", "probability"),
    ("graph --generator nope", "argument --generator: invalid choice"),
    ("graph --weights heavy", "argument --weights: invalid choice"),
    ("graph --apsp nope", "argument --apsp: invalid choice"),
    ("graph --n 20000 --apsp gpu-bfs", "the limit is 30 s", {}, "nogpu"),
    ("graph --n 100 --apsp fw-blocked --tile abc", "--apsp fw-blocked: tile must be one of (32, 64)"),
    ("graph --max-vertices 1", "--max-vertices must be ≥ 2"),
    # --- graph: bad graph files
    (f"graph --load {D}/missing.edges", "no such file"),
    (f"graph --load {D}/neg.edges", "is negative"),
    (f"graph --load {D}/neg.edges --apsp none", "is negative"),
    (f"graph --load {D}/huge.edges", "implies at least 1,000,000,001 vertices"),
    (f"graph --load {D}/big.edges", "implies 30,001 vertices"),
    (f"graph --load {D}/nan.edges", "is not a finite"),
    (f"graph --load {D}/inf.edges", "is not a finite"),
    (f"graph --load {D}/mixed.edges", "give every edge a weight or none"),
    (f"graph --load {D}/negid.edges", "vertex id -1 is negative"),
    (f"graph --load {D}/floatid.edges", "is not an integer"),
    (f"graph --load {D}/textid.edges", "is not an integer"),
    (f"graph --load {D}/cols4.edges", "got 4 columns"),
    (f"graph --load {D}/hdr_small.edges", "the header says n = 3"),
    (f"graph --load {D}/hdr_huge.edges", "the header says n = 999,999,999"),
    (f"graph --load {D}/empty.edges", "no edges"),
    (f"graph --load {D}/binary.edges", "not a text file"),
    (f"graph --load {D}/bigw.edges", "float32"),
    (f"graph --load {D}/ten.edges --max-vertices 5", "the limit is 5"),
    (f"graph --load {D}/pos.graphml", "position x = 'foo' is not a number"),
    (f"graph --load {D}/w.graphml", "the weight 'heavy' is not a number"),
    (f"graph --load {D}/negw.graphml", "is negative"),
    (f"graph --load {D}/infw.graphml", "not a finite"),
    (f"graph --load {D}/mixedw.graphml", "give every edge a weight or none"),
    (f"graph --load {D}/broken.graphml", "cannot read broken.graphml"),
    (f"graph --load {D}/empty.graphml", "no vertices"),
    # --- graph: outputs
    (f"graph --n 50 --export-graph {O}/g.xyz", "'.xyz'; use .graphml"),
    (f"graph --n 50 --export-graph {O}/g", "no extension; use .graphml"),
    (f"graph --n 50 --export-distances {O}/d", "no extension; use .npy"),
    (f"graph --n 50 --export-distances {O}/d.txt", "'.txt'; use .npy"),
    (f"graph --n 50 --apsp none --export-distances {O}/d.npy", "needs an APSP method"),
    ("graph --n 50 --export-graph /nonexistent/x.graphml", "does not exist"),
    (f"graph --load {D}/neg.edges --export-graph {O}/g.graphml --export-distances {O}/d.npy", "is negative"),
    (f"graph --n 50 --seed -3 --export-graph {O}/g.edgelist", "--seed"),
    # --- graph-reproduce
    ("graph-reproduce --types foo", "unknown graph type 'foo'"),
    ("graph-reproduce --types ,", "--types is empty"),
    ("graph-reproduce --sizes 10,20", "sizes must lie between 20 and 60000"),
    ("graph-reproduce --sizes abc", "--sizes"),
    ("graph-reproduce --sizes 200", "--sizes"),
    ("graph-reproduce --sizes 200,99999999", "sizes must lie between"),
    ("graph-reproduce --instances 0", "--instances must be ≥ 1"),
    ("graph-reproduce --instances x", "--instances must be an integer"),
    ("graph-reproduce --sources 0", "--sources must be ≥ 1"),
    ("graph-reproduce --seed -1", "--seed must be ≥ 0"),
    ("graph-reproduce --max-redraws -1", "--max-redraws must be ≥ 0"),
    ("graph-reproduce --connectivity foo", "--connectivity must be"),
    ("graph-reproduce --alpha1 nan", "--alpha1 must be a finite number"),
    ("graph-reproduce --p1 2", "α-model set 1"),
    ("graph-reproduce --sizes 200,400 --k1 100000", "--k1 must lie in"),
    ("graph-reproduce --method nope", "unknown --method 'nope'"),
    ("graph-reproduce --method gpu-bfs --sizes 4000,8000", "the limit is 30 s", {}, "nogpu"),   # ~250x over
    ("graph-reproduce --reference nope", "--reference"),
    (f"graph-reproduce --csv {O}/rows.json", "'.json'; use .csv"),
    (f"graph-reproduce --csv {O}/rows", "no extension; use .csv"),
    ("graph-reproduce --csv /nonexistent/r.csv", "does not exist"),
    (f"graph-reproduce --csv {O}/r.csv --instances 0", "--instances must be ≥ 1"),
    # --- graph-clustering
    ("graph-clustering --families foo", "unknown graph family 'foo'"),
    ("graph-clustering --families ,", "--families is empty"),
    ("graph-clustering --ws-sizes abc", "--ws-sizes must be an integer"),
    ("graph-clustering --ws-sizes 1000", "at least two sizes"),
    ("graph-clustering --ws-sizes 1000,-5", "--ws-sizes must be > 0"),
    ("graph-clustering --methods nope", "unknown clustering method 'nope'"),
    ("graph-clustering --methods gpu-arc --ws-sizes 900000,1000000 --families ws", "the limit is 30 s", {}, "nogpu"),
    ("graph-clustering --repeats 0", "--repeats must be ≥ 1"),
    ("graph-clustering --threads 0", "--threads must be ≥ 1"),
    ("graph-clustering --seed -1", "--seed must be ≥ 0"),
    (f"graph-clustering --csv {O}/c.dat", "'.dat'; use .csv"),
    (f"graph-clustering --csv {O}/c.csv --repeats -1", "--repeats must be ≥ 1"),
    # --- rng
    ("rng --approach nope", "rng: argument --approach: invalid choice"),
    ("rng --count 0", "--count must be ≥ 1"),
    ("rng --count 2.5", "--count must be a whole number"),
    ("rng --count abc", "--count must be a number"),
    ("rng --count 1e30", "--count must be ≤"),
    ("rng --seed -1", "--seed must be ≥ 0"),
    ("rng --gpus 0", "--gpus must be ≥ 1"),
    ("rng --approach seq --gpus 2", "--gpus applies to gpu1 and gpu2"),
    ("rng --approach gpu2 --streams 8", "--streams applies to threads and gpu1"),
    ("rng --approach threads --streams 0", "--streams must be ≥ 1"),
    ("rng --approach gpu1 --threads 2", "--threads applies to the threads approach"),
    (f"rng --out {O}/r.txt", "'.txt'; use .npy"),
    (f"rng --out {O}/r.npy --count 1e12", "--out would store"),
    # --- occupancy
    ("occupancy --cc 99", "unknown compute capability '99'"),
    ("occupancy --cc abc", "unknown compute capability"),
    ("occupancy --cc 9.0 --threads abc", "--threads must be an integer"),
    ("occupancy --cc 9.0 --threads 0", "threads per block must be ≥ 1"),
    ("occupancy --cc 9.0 --threads 2048", "exceed the CC 9.0 limit of 1024"),
    ("occupancy --cc 9.0 --regs 300", "exceed the CC 9.0 limit of 255"),
    ("occupancy --cc 9.0 --smem -1", "must be ≥ 0"),
    ("occupancy --cc 9.0 --regs 1e9999", "--regs must be an integer"),
    ("occupancy --cc 9.0 --carveout 150", "carve-out"),
    ("occupancy --cc device", "CuPy", {}, "nogpu"),
    ("occupancy", "no GPU to take the compute capability from", {}, "nogpu"),
    # --- flint: options
    ("flint", "the following arguments are required: model"),
    ("flint nosuch.flint", "no such model file"),
    ("flint luo_rudy_1991 --dt -1", "--dt must be > 0"),
    ("flint luo_rudy_1991 --dt nan", "--dt must be a finite number"),
    ("flint luo_rudy_1991 --t-end inf", "--t-end must be a finite number"),
    ("flint luo_rudy_1991 --t-end abc", "--t-end must be a number"),
    ("flint luo_rudy_1991 --dt 2000", "is larger than --t-end"),
    ("flint luo_rudy_1991 --t-end 1e12 --dt 1e-12", "at most 1e+12"),
    ("flint luo_rudy_1991 --runtime gpu", "--runtime must be"),
    ("flint luo_rudy_1991 --integrator rk9", "--integrator must be euler or rk4"),
    ("flint luo_rudy_1991 --dtype float16", "--dtype must be float64 or float32"),
    ("flint luo_rudy_1991 --mapping warp", "--mapping must be"),
    ("flint luo_rudy_1991 --ensemble 0", "--ensemble must be ≥ 1"),
    ("flint luo_rudy_1991 --ensemble 2000 --every 1 --t-end 1e6", "recorded values need about"),
    ("flint luo_rudy_1991 --ensemble 2000000000", "GiB of host memory"),
    ("flint luo_rudy_1991 --every 0", "--every must be ≥ 1"),
    ("flint luo_rudy_1991 --every -5", "--every must be ≥ 1"),
    ("flint luo_rudy_1991 --runtime c --threads 0", "--threads must be ≥ 1"),
    ("flint luo_rudy_1991 --record Q", "--record: 'Q' is not a state"),
    ("flint luo_rudy_1991 --record ,", "--record: no state to record"),
    ("flint luo_rudy_1991 --set Q=1", "--set: 'Q' is not a parameter"),
    ("flint luo_rudy_1991 --set g_Na=nan", "--set g_Na must be a finite number"),
    ("flint luo_rudy_1991 --set g_Na", "--set g_Na must be a number"),
    ("flint luo_rudy_1991 --ensemble 2 --vary Q=1:2", "--vary: 'Q' is not a parameter"),
    ("flint luo_rudy_1991 --ensemble 2 --vary g_Na=a:b", "--vary must be a number"),
    ("flint luo_rudy_1991 --line 0", "--line must be ≥ 1"),
    ("flint luo_rudy_1991 --line 5 --ring 5", "exclude each other"),
    ("flint luo_rudy_1991 --line 5 --coupling nan", "--coupling must be a finite number"),
    ("flint luo_rudy_1991 --backend cpu --engine ts", "--engine ts runs on the GPU, but --backend cpu says the CPU"),
    ("--backend cpu flint luo_rudy_1991 --engine is", "--engine is runs on the GPU, but --backend cpu says the CPU"),
    ("flint luo_rudy_1991 --backend gpu --method lsoda", "--method lsoda (the SBML reference simulator) runs on the CPU"),
    (f"flint luo_rudy_1991 --csv {O}/t.json", "'.json'; use .csv"),
    ("flint luo_rudy_1991 --csv /nonexistent/t.csv", "does not exist"),
    (f"flint luo_rudy_1991 --csv {O}/t.csv --dt 0", "--dt must be > 0"),
    ("flint luo_rudy_1991 --max-model-mb 0", "--max-model-mb must be > 0"),
    ("flint luo_rudy_1991.xml --max-model-mb 0.001", "are refused (raise the limit"),
    # --- flint --method dopri5 / rodas4: an SBML model as an adaptive ensemble (issue 34)
    ("flint luo_rudy_1991 --method rodas4", "runs an SBML model as an ensemble"),
    ("flint luo_rudy_1991.xml --method dopri5 --ensemble 2 --vary Q=1:2", "--vary: 'Q' is not a constant parameter"),
    ("flint luo_rudy_1991.xml --method dopri5 --vary g_Na=a:b", "--vary must be a number"),
    ("flint luo_rudy_1991.xml --method dopri5 --set Q=1", "--set: 'Q' is not a constant parameter"),
    ("flint luo_rudy_1991.xml --method dopri5 --set g_Na=nan", "--set g_Na must be a finite number"),
    ("flint luo_rudy_1991.xml --method rodas4 --engine roadrunner", "--engine must be one of ts, is, c, c-is, numpy or auto for an ensemble"),
    ("flint luo_rudy_1991.xml --method dopri5 --engine gpu", "--engine must be one of ts, is, c, c-is, numpy or auto for an ensemble"),
    ("flint luo_rudy_1991.xml --method dopri5 --backend cpu --engine ts", "--engine ts runs on the GPU, but --backend cpu says the CPU"),
    ("flint luo_rudy_1991.xml --method dopri5 --dtype float32", "--dtype float32 does not apply to --method dopri5"),
    ("flint luo_rudy_1991.xml --method rodas4 --mapping expression", "--mapping expression does not apply to --method rodas4"),
    ("flint luo_rudy_1991.xml --method dopri5 --line 4", "--line/--ring does not apply to --method dopri5"),
    ("flint luo_rudy_1991.xml --method dopri5 --threads 2", "--threads 2 does not apply to --method dopri5"),
    ("flint luo_rudy_1991.xml --method dopri5 --t-end 10 --dt 0.001 --ensemble 1000000", "more than 200,000,000 values"),
    ("flint luo_rudy_1991.xml --method dopri5 --dt 1e-9", "more than 10,000,000 output points"),
    ("flint luo_rudy_1991.xml --method dopri5 --record Q", "variable 'Q' is not in the model"),
    ("flint luo_rudy_1991.xml --method dopri5 --runtime sbml", "--method does not apply to --runtime sbml"),
    # --- flint: bad model files
    (f"flint {D}/bigcomment.xml", "are refused (raise the limit", {"GSE_MAX_MODEL_MB": "1"}),
    (f"flint {D}/bigcomment.xml", "GSE_MAX_MODEL_MB", {"GSE_MAX_MODEL_MB": "abc"}),
    (f"flint {D}/hugecomment.xml", "a comment of 9 MiB"),
    (f"flint {D}/hugecomment.xml --runtime sbml", "a comment of 9 MiB"),
    (f"flint {D}/deep.flint", "nested too deeply"),
    (f"flint {D}/sum.flint", "nested too deeply"),
    (f"flint {D}/lit.flint", "(401 digits) is too large for a float"),
    (f"flint {D}/deep.xml", "nested more than 1000 deep"),
    (f"flint {D}/deep.xml --runtime sbml", "nested more than 1000 deep"),
    (f"flint {D}/deep.cellml", "nested more than 1000 deep"),
    (f"flint {D}/comp.xml", "refers to a source 'missing_sub.xml' that cannot be accessed"),
    (f"flint {D}/comp.xml --runtime sbml", "refers to a source 'missing_sub.xml' that cannot be accessed"),
    (f"flint {D}/units.cellml", "units mismatch"),
    (f"flint {D}/imp_missing.cellml", "imports cannot be resolved"),
    (f"flint {D}/malformed.xml", "malformed"),
    (f"flint {D}/malformed.xml --runtime sbml", "malformed"),
    (f"flint {D}/malformed.cellml", "malformed"),
    (f"flint {D}/empty.xml", "malformed"),
    (f"flint {D}/syntax.flint", "cannot parse"),
    (f"flint {D}/undef.flint", "undefined name"),
    (f"flint {D}/nostate.flint", "no state variables"),
    (f"flint {D}/loop.flint", "algebraic loop"),
    (f"flint {D}/nanstate.flint", "initial value must be a number"),
    (f"flint {D}/binary.flint", "cannot read"),
    (f"flint {D}", "Is a directory"),
    # --- flint --runtime sbml
    ("flint luo_rudy_1991 --runtime sbml", "needs an SBML file"),
    ("flint luo_rudy_1991.xml --runtime sbml --dt 1e-9", "more than 10,000,000 output points"),
    ("flint luo_rudy_1991.xml --runtime sbml --ensemble 4", "--ensemble 4 does not apply"),
    ("flint luo_rudy_1991.xml --runtime sbml --line 5", "--line/--ring do not apply"),
    ("flint luo_rudy_1991.xml --runtime sbml --integrator rk4", "--integrator does not apply"),
    ("flint luo_rudy_1991.xml --runtime sbml --record Q", "'Q' is not a variable"),
    ("flint luo_rudy_1991.xml --runtime sbml --set Q=1", "'Q' is not a parameter"),
    ("flint luo_rudy_1991.xml --runtime sbml --every 0", "--every must be ≥ 1"),
    ("flint luo_rudy_1991.xml --runtime sbml --dt 2000", "is larger than --t-end"),
    (f"flint {D}/nosuch.xml --runtime sbml", "no such model file"),
    # --- flint-suite
    ("flint-suite abc", "CASES: case must be a number or a range"),
    ("flint-suite 5-1", "bad case range"),
    ("flint-suite 1-99999999999", "five digits"),
    ("flint-suite --workers 0", "--workers must be ≥ 1"),
    ("flint-suite --timeout -1", "--timeout must be > 0"),
    ("flint-suite --timeout nan", "--timeout must be a finite number"),
    ("flint-suite --runtime nope", "--runtime must be"),
    ("flint-suite --engine ts --backend cpu", "--engine ts runs on the GPU, but --backend cpu says the CPU"),
    (f"flint-suite 1 --json {O}/r.txt", "'.txt'; use .json"),
    (f"flint-suite 1 --out-dir {O}/afile", "is a file, not a folder"),
    ("flint-suite 1 --json /nonexistent/r.json", "does not exist"),
    (f"flint-suite 1 --suite-dir {D}/nosuite", "SBML Test Suite not found"),
    (f"flint-suite 1 --suite-dir {D}/nosuite --json {O}/r.json --out-dir {O}/outd/", "not found"),
    ("flint-suite --scheduler bogus", "--scheduler: scheduler 'bogus'"),
    # --- graph: the APSP method options (issues 20, 21), passed only to the methods that take them
    ("graph --n 100 --apsp cpu --batch 4", "--batch does not apply to --apsp cpu"),
    ("graph --n 100 --apsp cpu-dijkstra --block 64", "--block does not apply to --apsp cpu-dijkstra"),
    ("graph --n 100 --apsp cpu-dijkstra --S 32", "--S does not apply to --apsp cpu-dijkstra"),
    ("graph --n 100 --apsp cpu --threads 2", "--threads does not apply to --apsp cpu"),
    ("graph --n 100 --apsp cpu-dijkstra --threads 0", "--threads must be ≥ 1"),
    ("graph --n 100 --apsp cpu-dijkstra --sources 5,abc", "--sources must be an integer"),
    ("graph --n 100 --apsp cpu-dijkstra --sources 5,100", "--sources: vertex 100 is outside the graph"),
    ("graph --n 100 --apsp cpu-dijkstra --sources ,", "--sources is empty"),
    ("graph --n 100 --apsp fw-v1 --sources 1", "--sources does not apply to --apsp fw-v1"),
    ("graph --n 100 --apsp none --sources 1", "--sources needs an APSP method"),
    ("graph --n 100 --apsp fw-v1 --path 0 100", "--path: vertex 100 is outside the graph"),
    ("graph --n 100 --path 0 -1", "--path must be ≥ 0"),
    ("graph --n 100 --path 0", "argument --path: expected 2 arguments"),
    ("graph --n 100 --apsp fw-v1 --arith dpx", "fw-v1 has no dpx kernels"),
    ("graph --n 100 --apsp fw-v1 --arith int64", "argument --arith: invalid choice"),
    ("graph --n 100 --apsp cpu --arith int32", "--arith does not apply to --apsp cpu"),
    ("graph --n 100 --apsp cpu --no-pred", "--no-pred does not apply to --apsp cpu"),
    ("graph --weights float --n 100 --apsp fw-v1 --arith int32", "int32 arithmetic would not be exact"),
    ("graph --n 100 --apsp fw-mm --fw-option l=0", "l must be ≥ 1"),
    ("graph --n 100 --apsp fw-mm --fw-option q=1", "--apsp fw-mm has no option 'q'"),
    ("graph --n 100 --apsp fw-mm --fw-option l", "write KEY=VALUE"),
    ("graph --n 100 --apsp fw-mm --fw-option arith=int32", "use --arith"),
    ("graph --n 100 --apsp cpu --fw-option l=2", "--apsp cpu has no option 'l'"),
    ("graph --n 100 --apsp fw-recursive --fw-option cfg=9x9", "cfg must be one of"),
    ("graph --n 100 --apsp fw-tuned --fw-option tiles=16,48", "tile must be one of"),
    ("graph --n 100 --apsp fw-fast --tile 48", "tile must be one of"),
    (f"graph --n 100 --apsp fw-blocked --tile 64 --export-paths {O}/p.npy", "keeps no predecessors"),
    (f"graph --n 100 --apsp fw-v1 --export-paths {O}/p.txt", "'.txt'; use .npy"),
    (f"graph --n 100 --apsp none --export-paths {O}/p.npy", "--export-paths needs an APSP method"),
    ("graph --n 40000 --apsp gpu-msbfs", "the limit is 30 s", {}, "nogpu"),
    ("graph --generator random --n 100 --k 1", "k must be ≥ 2"),
    # --- graph-fw (issue 20)
    ("graph-fw --versions nope", "unknown Floyd–Warshall version 'nope'"),
    ("graph-fw --versions fw-v3 --sizes 4096", "the limit is 30 s", {}, "nogpu"),
    ("graph-fw --versions fw-mm:tile=48", "tile must be one of"),
    ("graph-fw --versions fw-mm:zz=1", "unknown option(s) zz"),
    ("graph-fw --versions fw-mm:tile", "options are key=value"),
    ("graph-fw --versions fw-v2 --sizes 2000", "is for teaching, n ≤ 1024"),
    ("graph-fw --sizes 0", "sizes n must lie in 1 … 65536"),
    ("graph-fw --sizes 10,abc", "--sizes must be an integer"),
    ("graph-fw --repeats 0", "--repeats must be ≥ 1"),
    ("graph-fw --seed -1", "--seed must be ≥ 0"),
    ("graph-fw --arith int64", "argument --arith: invalid choice"),
    ("graph-fw --versions fw-v1 --arith dpx", "fw-v1 has no dpx kernels"),
    ("graph-fw --table 9", "argument --table: invalid choice"),
    ("graph-fw --table 4.7", "needs a GPU", {}, "nogpu"),
    (f"graph-fw --csv {O}/f.json --versions nope", "'.json'; use .csv"),
    # --- graph-bfs (issue 21; GPU only)
    ("graph-bfs --types foo", "unknown graph type 'foo'"),
    ("graph-bfs --sizes 100", "at least two sizes"),
    ("graph-bfs --sizes 100,99999999", "sizes must lie between"),
    ("graph-bfs --kernels gpu-bfs-k9", "unknown BFS kernel 'gpu-bfs-k9'"),
    ("graph-bfs --sweep --kernels gpu-bfs-k1", "--kernels applies to the evolution"),
    ("graph-bfs --blocks 32:512:32", "--blocks applies to the sweep"),
    ("graph-bfs --sweep --blocks 48,64", "multiples of 32"),
    ("graph-bfs --sweep --blocks 0:64:32", "--blocks must be ≥ 1"),
    ("graph-bfs --block 100", "--block must be a multiple of 32"),
    ("graph-bfs --batch 0", "--batch must be ≥ 1"),
    ("graph-bfs --instances 0", "--instances must be ≥ 1"),
    ("graph-bfs --sweep --kernel gpu-msbfs", "the sweep takes"),
    ("graph-bfs --sweep --repeats 0", "--repeats must be ≥ 1"),
    ("graph-bfs --sizes 1000,2000 --paper-sizes", "exclude each other"),
    (f"graph-bfs --csv {O}/b.dat", "'.dat'; use .csv"),
    # --- graph-sssp (issue 21)
    ("graph-sssp", "the following arguments are required: experiment"),
    ("graph-sssp nope", "invalid choice: 'nope'"),
    ("graph-sssp table --methods sssp", "the limit is 30 s", {}, "nogpu"),
    ("graph-sssp table --methods foo", "unknown method 'foo'"),
    ("graph-sssp table --topologies foo", "unknown topology 'foo'"),
    ("graph-sssp table --n 1", "--n must be ≥ 2"),
    ("graph-sssp table --arcs 5", "Hamiltonian cycle needs |E| ≥ n"),
    ("graph-sssp table --arcs 99999999999", "--arcs must be ≤ n(n−1)"),
    ("graph-sssp table --n 30000 --topologies complete", "too large"),
    ("graph-sssp table --w-max 0", "--w-max must be ≥ 1"),
    ("graph-sssp table --figure 3.10", "--figure does not apply to graph-sssp table"),
    ("graph-sssp table --max-sources 0", "--max-sources must be ≥ 1"),
    ("graph-sssp table --max-sources foo:3", "write K, or METHOD:K"),
    ("graph-sssp table --threads 0", "--threads must be ≥ 1"),
    ("graph-sssp scaling --figure 3.11", "argument --figure: invalid choice"),
    ("graph-sssp scaling --figure 3.12 --values 100", "--values must be ≥ 4096"),
    ("graph-sssp scaling --values abc", "--values must be an integer"),
    ("graph-sssp overhead", "the limit is 30 s", {}, "nogpu"),
    ("graph-sssp overhead --max-sources cpu-dijkstra:5", "overhead takes one K"),
    ("graph-sssp limits --memory 12Q", "--memory must be a size"),
    ("graph-sssp limits --memory this-gpu", "needs a GPU", {}, "nogpu"),
    ("graph-sssp limits --arcs-per-vertex -1", "--arcs-per-vertex must be > 0"),
    (f"graph-sssp limits --csv {O}/l.csv", "--csv does not apply to graph-sssp limits"),
    # --- ch-sweep (issue 25)
    ("ch-sweep", "the following arguments are required: --vary"),
    ("ch-sweep --vary mean=1:2", "a range is START:STOP:COUNT"),
    ("ch-sweep --vary mean=3..1", "the range is empty"),
    ("ch-sweep --vary mean=0:1:0", "COUNT must be a whole number ≥ 1"),
    ("ch-sweep --vary foo=1,2 --scheduler none", "foo is not a Cahn–Hilliard parameter"),
    ("ch-sweep --vary mean=0 --vary mean=1", "mean is varied twice"),
    ("ch-sweep --vary mean=5 --scheduler none", "mean φ must be in"),
    ("ch-sweep --vary mean=0 --scheduler nowhere", "--scheduler: scheduler 'nowhere'"),
    ("ch-sweep --vary mean=0 --workers 0", "--workers must be ≥ 1"),
    ("ch-sweep --vary mean=0 --scheduler none --workers 2", "it does not apply with --scheduler none"),
    ("ch-sweep --vary mean=0 --resume", "give it with --csv"),
    (f"ch-sweep --vary mean=0 --resume --overwrite --csv {O}/s.csv", "exclude each other"),
    (f"ch-sweep --vary mean=0 --csv {O}/s.csv --scheduler none", "exists: --resume continues that sweep"),
    (f"ch-sweep --vary mean=0 --csv {O}/s.csv --resume --scheduler none", "is not a sweep result file"),
    (f"ch-sweep --vary mean=0 --csv {O}/s.txt", "'.txt'; use .csv"),
    ("ch-sweep --vary mean=0 --size 4", "size must be an integer ≥ 8"),
    ("ch-sweep --vary seed=1,2 --dt -1", "dt must be a positive finite number"),
    ("ch-sweep --vary mean=0 --steps -1", "--steps must be ≥ 0"),
    (f"ch-sweep --vary mean=0 --fields-dir {D}/nofolder", "does not exist"),
    # --- flint --sweep (issue 25)
    ("flint luo_rudy_1991 --sweep g_Na=1:2", "a range is START:STOP:COUNT"),
    ("flint luo_rudy_1991 --sweep Q=1,2", "--sweep: 'Q' is not a parameter"),
    ("flint luo_rudy_1991 --sweep g_Na=a,b", "the values must be numbers"),
    ("flint luo_rudy_1991.xml --sweep g_Na=1,2 --runtime sbml", "--sweep does not apply to --runtime sbml"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --ensemble 4", "--ensemble does not combine with --sweep"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --vary g_Na=1:2", "--vary does not combine with --sweep"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --mapping expression", "does not apply to --sweep"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --slice 0", "--slice must be ≥ 1"),
    ("flint luo_rudy_1991 --slice 5", "--slice applies only with --sweep"),
    ("flint luo_rudy_1991 --scheduler none", "--scheduler applies only with --sweep"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --resume", "give it with --csv"),
    (f"flint luo_rudy_1991 --sweep g_Na=1,2 --csv {O}/f.csv --scheduler none", "exists: --resume continues"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --scheduler bad", "--scheduler: scheduler 'bad'"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --scheduler none --workers 2", "it does not apply with --scheduler none"),
    ("flint luo_rudy_1991 --sweep g_Na=1,2 --dt 0", "--dt must be > 0"),
    ("flint luo_rudy_1991 --sweep g_Na=0:1:2000000 --slice 2000000 --every 1 --t-end 1e4", "recorded values need"),
    (f"flint luo_rudy_1991 --sweep g_Na=1,2 --traces-dir {D}/nofolder --scheduler none", "does not exist"),
    # --- --scheduler / --workers on the existing sweeps (issue 25)
    ("graph-reproduce --scheduler nowhere", "--scheduler: scheduler 'nowhere'"),
    ("graph-reproduce --workers 2", "it does not apply without --scheduler"),
    ("graph-reproduce --scheduler local --workers 0", "--workers must be ≥ 1"),
    ("graph-clustering --scheduler tcp://host:99999", "--scheduler: scheduler 'tcp://host:99999'"),
    ("graph-clustering --workers 3", "it does not apply without --scheduler"),
]


def _write_fixtures(d: Path) -> None:
    """Every bad input file of the table, generated (nothing third-party is copied)."""
    fmt = np.lib.format
    (d / "empty.npz").write_bytes(b"")
    (d / "folder.npz").mkdir()
    np.savez(d / "good.npz", phi=np.zeros((16, 16)), params_json=np.array(json.dumps({"size": 16})))
    good = (d / "good.npz").read_bytes()
    (d / "trunc.npz").write_bytes(good[: len(good) // 2])
    np.savez(d / "str.npz", phi=np.array([["a"] * 16] * 16))
    np.save(d / "vec.npy", np.zeros(16))
    np.savez(d / "list.npz", phi=np.zeros((16, 16)), params_json=np.array(json.dumps([1, 2])))
    np.savez(d / "cplx.npz", phi=np.zeros((16, 16)) + 1j)
    np.savez(d / "cube.npz", phi=np.zeros((16, 16, 16)))
    np.savez(d / "rect.npz", phi=np.zeros((16, 8)))
    np.savez(d / "d4.npz", phi=np.zeros((8, 8, 8, 8)))
    np.savez(d / "nan.npz", phi=np.full((16, 16), np.nan))
    np.savez(d / "nophi.npz", field=np.zeros((16, 16)))
    np.savez(d / "obj.npz", phi=np.array([[None] * 16] * 16, dtype=object))
    (d / "notzip.npz").write_text("phi = 1, 2, 3\n")
    np.savez(d / "badjson.npz", phi=np.zeros((16, 16)), params_json=np.array("{not json"))
    np.savez(d / "badtypes.npz", phi=np.zeros((16, 16)), params_json=np.array(json.dumps({"size": "big"})))
    np.savez(d / "tiny.npz", phi=np.zeros((4, 4)))

    def header_only(name, shape, descr="<f8", data=b""):
        import io
        buf = io.BytesIO()
        fmt.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
        with zipfile.ZipFile(d / name, "w") as z:
            z.writestr("phi.npy", buf.getvalue() + data)
    header_only("huge_hdr.npz", (32768, 32768))               # 8 GiB claimed, nothing stored
    header_only("tib.npz", (1 << 21, 1 << 21))                # 32 TiB claimed
    header_only("trunc_member.npz", (64, 64), data=b"\0" * 100)
    np.save(d / "full.npy", np.zeros((64, 64)))
    full = (d / "full.npy").read_bytes()
    (d / "trunc.npy").write_bytes(full[: len(full) // 2])
    # graph files
    files = {
        "neg.edges": "0 1 1.0\n1 2 -1.0\n0 2 2.0\n", "huge.edges": "0 1000000000\n", "big.edges": "0 30000\n",
        "nan.edges": "0 1 nan\n1 2 1\n", "inf.edges": "0 1 inf\n1 2 1\n", "mixed.edges": "0 1 2.0\n1 2\n",
        "negid.edges": "-1 2\n2 3\n", "floatid.edges": "0.5 1\n", "textid.edges": "a b\n",
        "cols4.edges": "0 1 2 3\n", "hdr_small.edges": "# n = 3\n0 5\n", "hdr_huge.edges": "# n = 999999999\n0 1\n",
        "empty.edges": "# nothing here\n", "bigw.edges": "0 1 1e39\n", "ten.edges": "0 9\n",
    }
    for name, text in files.items():
        (d / name).write_text(text)
    (d / "binary.edges").write_bytes(b"\xff\xfe\x00\x01 \x80\x81\n")
    gm = ('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">{keys}'
          '<graph edgedefault="undirected">{body}</graph></graphml>')
    kx = ('<key id="x" for="node" attr.name="x" attr.type="string"/>'
          '<key id="y" for="node" attr.name="y" attr.type="string"/>')
    kw = '<key id="w" for="edge" attr.name="weight" attr.type="{t}"/>'
    (d / "pos.graphml").write_text(gm.format(keys=kx, body='<node id="a"><data key="x">foo</data><data key="y">1</data>'
                                             '</node><node id="b"><data key="x">1</data><data key="y">2</data></node>'
                                             '<edge source="a" target="b"/>'))
    for name, t, w in (("w", "string", "heavy"), ("negw", "double", "-2"), ("infw", "double", "INF")):
        (d / f"{name}.graphml").write_text(gm.format(keys=kw.format(t=t), body=f'<node id="a"/><node id="b"/>'
                                                     f'<edge source="a" target="b"><data key="w">{w}</data></edge>'))
    (d / "mixedw.graphml").write_text(gm.format(keys=kw.format(t="double"), body='<node id="a"/><node id="b"/>'
                                                '<node id="c"/><edge source="a" target="b"><data key="w">2</data>'
                                                '</edge><edge source="b" target="c"/>'))
    (d / "broken.graphml").write_text('<?xml version="1.0"?><graphml><graph><node id=')
    (d / "empty.graphml").write_text(gm.format(keys="", body=""))
    # model files
    sbml = ('<?xml version="1.0" encoding="UTF-8"?>\n<sbml xmlns="http://www.sbml.org/sbml/level3/version2/core" '
            'level="3" version="2"><model id="m">{pre}<listOfParameters><parameter id="k" value="1" constant="false"/>'
            '</listOfParameters><listOfRules><rateRule variable="k"><math xmlns="http://www.w3.org/1998/Math/MathML">'
            '{math}</math></rateRule></listOfRules></model></sbml>')
    (d / "bigcomment.xml").write_text(sbml.format(pre="<!--" + "x" * (2 << 20) + "-->", math="<cn>1</cn>"))
    (d / "hugecomment.xml").write_text(sbml.format(pre="<!--" + "x" * (9 << 20) + "-->", math="<cn>1</cn>"))
    (d / "deep.xml").write_text(sbml.format(pre="", math="<apply><minus/>" * 5000 + "<ci>k</ci>" + "</apply>" * 5000))
    (d / "malformed.xml").write_text("<sbml><model")
    (d / "empty.xml").write_text("")
    (d / "comp.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<sbml xmlns="http://www.sbml.org/sbml/level3/version1/core" '
        'xmlns:comp="http://www.sbml.org/sbml/level3/version1/comp/version1" level="3" version="1" comp:required="true">'
        '<comp:listOfExternalModelDefinitions><comp:externalModelDefinition comp:id="ext" comp:source="missing_sub.xml" '
        'comp:modelRef="m"/></comp:listOfExternalModelDefinitions><model id="top"><comp:listOfSubmodels>'
        '<comp:submodel comp:id="sub" comp:modelRef="ext"/></comp:listOfSubmodels></model></sbml>')
    cellml = ('<?xml version="1.0" encoding="UTF-8"?>\n<model xmlns="http://www.cellml.org/cellml/2.0#" '
              'xmlns:xlink="http://www.w3.org/1999/xlink" name="u">{body}</model>')
    comp = ('<component name="c"><variable name="t" units="second" interface="public_and_private"/>'
            '<variable name="x" units="metre" initial_value="1" interface="public_and_private"/>'
            '<variable name="k" units="second" initial_value="2" interface="public_and_private"/>'
            '<math xmlns="http://www.w3.org/1998/Math/MathML"><apply><eq/><apply><diff/><bvar><ci>t</ci></bvar>'
            '<ci>x</ci></apply>{rhs}</apply></math></component>')
    (d / "units.cellml").write_text(cellml.format(body=comp.format(rhs="<ci>k</ci>")))
    (d / "deep.cellml").write_text(cellml.format(body=comp.format(
        rhs="<apply><minus/>" * 5000 + "<ci>k</ci>" + "</apply>" * 5000)))
    (d / "imp_missing.cellml").write_text(cellml.format(
        body='<import xlink:href="no_such_sub.cellml"><component name="c" component_ref="c"/></import>'))
    (d / "malformed.cellml").write_text('<?xml version="1.0"?><model xmlns="http://www.cellml.org/cellml/2.0#" '
                                        'name="m"><component name="c"><variable name=')
    flint = {
        "deep.flint": "model d\nstate x = 1\node x = " + "-" * 100000 + "x\n",
        "sum.flint": "model d\nstate x = 1\node x = " + "+".join(["x"] * 200000) + "\n",
        "lit.flint": "model d\nstate x = 1\node x = " + "9" * 401 + "*x\n",
        "syntax.flint": "model d\nstate x = 1\node x = ((x\n",
        "undef.flint": "model d\nstate x = 1\node x = -y\n",
        "nostate.flint": "model d\nparam k = 1\n",
        "loop.flint": "model d\nstate x = 1\nlet a = b\nlet b = a\node x = a\n",
        "nanstate.flint": "model d\nstate x = nan\node x = -x\n",
    }
    for name, text in flint.items():
        (d / name).write_text(text)
    (d / "binary.flint").write_bytes(b"model d\n\xff\xfe\x00state")



#: Every SAMPLE-th case, and the cases about memory (PROCESS), also run as a plain ``python main.py …``:
#: the same exit status and error line, no traceback, and the process's peak RSS bounded.
SAMPLE = 20
PROCESS = ("huge_hdr.npz", "tib.npz", "hugecomment.xml", "--ensemble 2000000000", "--count 1e12",
           "--ensemble 2000 --every 1", "--size 100000", "huge.edges", "--dt 1e-9")
GROWTH_MB = 256                    # in-process: how far one case may raise the peak RSS


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_inputs")
    _write_fixtures(d)
    return d


def _argv(i: int, fixtures: Path, outdir: Path) -> tuple[list[str], dict]:
    """Case ``i``'s command line with its folders filled in, and a sentinel at each output path."""
    marked = CASES[i][0].split()
    outdir.mkdir()
    argv = [a.replace(D, str(fixtures)).replace(O, str(outdir)) for a in marked]
    made = {}
    for k, a in enumerate(marked):
        if O in a:
            made.update(_sentinel(argv[k], marked[k - 1] if k else ""))
    return argv, made


def _leftovers(outdir: Path, made: dict) -> tuple[bool, list[str]]:
    unchanged = all(p.exists() and p.read_bytes() == data for p, data in made.items())
    return unchanged, sorted(x.name for x in outdir.rglob("*") if x.is_file() and x not in made)


def _sentinel(path: str, flag: str) -> dict:
    """A sentinel at an output path of the command line (for ``--out-dir …/``: a folder holding one
    file); returns {file: bytes} to compare afterwards."""
    p = Path(path)
    if flag == "--out-dir" and path.endswith("/"):
        p.mkdir(parents=True, exist_ok=True)
        p = p / "00001.csv"
    data = f"sentinel {path}\n".encode() + os.urandom(8)
    p.write_bytes(data)
    return {p: data}


def _same(err: str) -> str:
    """An error line with what may change between two runs (the free memory it quotes) masked."""
    return re.sub(r"[\d.]+ GiB are available", "… GiB are available", err)


def _in_plain_sample(i: int) -> bool:
    return i % SAMPLE == 0 or any(key in CASES[i][0] for key in PROCESS)


def test_table_is_large_and_covers_every_command():
    assert len(CASES) >= 150
    cmds = {c[0].split()[0] if not c[0].startswith("--") else c[0].split()[2] for c in CASES if c[0].split()}
    assert {"ch", "graph", "graph-reproduce", "graph-clustering", "occupancy", "flint", "flint-suite", "graph-fw",
            "graph-bfs", "graph-sssp", "ch-sweep", "rng"} <= cmds
    assert all(any(key in c[0] for c in CASES) for key in PROCESS)        # the memory sample is in the table
    assert sum(map(_in_plain_sample, range(len(CASES)))) >= len(CASES) // SAMPLE


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0][:60] for c in CASES])
def test_bad_input_one_error_line(fixtures, tmp_path, capfd, monkeypatch, i):
    case = CASES[i]
    if len(case) > 3 and case[3] == "nogpu":
        from kernels.backend import gpu_available
        if gpu_available()[0]:
            pytest.skip("a GPU is present here")
    env = case[2] if len(case) > 2 else None
    argv, made = _argv(i, fixtures, tmp_path / "o")
    status, out, err, grew = run_case(argv, capfd, monkeypatch, env)
    unchanged, extra = _leftovers(tmp_path / "o", made)
    assert "Traceback" not in err + out, err
    lines = err.strip("\n").splitlines()
    assert status == 2, (argv, status, err)
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert case[1] in lines[0], lines[0]
    assert grew is None or grew < GROWTH_MB, f"the peak RSS rose by {grew:.0f} MiB"
    assert unchanged, f"an output sentinel was changed or removed: {argv}"
    assert not extra, f"files left behind: {extra}"
    if _in_plain_sample(i):               # a plain `python main.py …` answers the same
        p_argv, p_made = _argv(i, fixtures, tmp_path / "p")
        p_status, p_out, p_err, rss = run_plain(p_argv, tmp_path / "p", env, CASE_TIMEOUT)
        p_unchanged, p_extra = _leftovers(tmp_path / "p", p_made)
        assert (p_status, _same(p_err.replace(str(tmp_path / "p"), str(tmp_path / "o")))) == (status, _same(err)), p_err
        assert "Traceback" not in p_err + p_out, p_err
        assert rss < PEAK_RSS_MB, f"peak RSS {rss:.0f} MiB"
        assert p_unchanged and not p_extra, (p_unchanged, p_extra)


# --- the contract's other parts --------------------------------------------------------------------
def test_debug_prints_the_traceback(tmp_path, capfd, monkeypatch):
    status, _out, err, _rss = run_plain(["--debug", "ch", "--dx", "1e-300"], tmp_path)     # main.py's own
    assert status == 2 and "Traceback (most recent call last)" in err and "InvalidParameter" in err
    assert err.strip().splitlines()[-1].startswith("error: the explicit stability limit")
    for argv in (["ch", "--debug", "--dx", "1e-300"], ["ch", "--dx", "1e-300"]):
        status, _out, err_in, _mb = run_case(argv, capfd, monkeypatch)
        assert status == 2
        assert ("Traceback (most recent call last)" in err_in) == ("--debug" in argv), err_in
        assert err_in.strip().splitlines()[-1] == err.strip().splitlines()[-1]


def test_backend_before_and_after_the_command(capfd, monkeypatch):
    """GSE_BACKEND=gpu would fail without a GPU (or pick it): the flag must win in both positions."""
    gpu = {"GSE_BACKEND": "gpu"}
    for argv in (["--backend", "cpu", "ch"], ["ch", "--backend", "cpu"]):
        status, out, err, _mb = run_case(argv + ["--size", "16", "--steps", "2", "--json"], capfd, monkeypatch, gpu)
        assert status == 0, err
        assert json.loads(out)["backend"] == "cpu"
    status, out, err, _mb = run_case(["--backend", "cpu", "graph", "--n", "60", "--json"], capfd, monkeypatch, gpu)
    assert status == 0 and json.loads(out)["backend"] == "cpu", err


def test_blow_up_saves_the_last_good_field(tmp_path, capfd, monkeypatch):
    """dt far above the stability limit: one error line naming the saved file; the file holds the
    field of the last good step, the same field a run stopped at that step saves."""
    npz = tmp_path / "blown.npz"
    status, out, err, _mb = run_case(["ch", "--size", "16", "--dt", "0.035", "--steps", "2000", "--record-every",
                                      "5", "--save-field", str(npz), "--json"], capfd, monkeypatch)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "blew up" in lines[0] and str(npz) in lines[0], err
    assert out == ""
    from kernels.cahn_hilliard.io import load_field
    phi, params, extras = load_field(npz)
    good = int(extras["steps"])
    assert 0 < good < 2000 and good % 5 == 0 and np.isfinite(phi).all() and params.dt == 0.035
    ref = tmp_path / "ref.npz"
    status, _out, err, _mb = run_case(["ch", "--size", "16", "--dt", "0.035", "--steps", str(good),
                                       "--record-every", "5", "--save-field", str(ref), "--json"], capfd, monkeypatch)
    assert status == 0, err
    assert np.array_equal(load_field(ref)[0], phi)


def _in_compiled_loop(pid: int) -> bool:
    """Whether process ``pid`` has loaded a compiled Flint library (the loop starts right after)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False
    return any(line.endswith(".so") and "/flint_" in line for line in maps.splitlines())


def test_flint_c_runtime_answers_ctrl_c_with_a_huge_every(capfd, monkeypatch):
    """--every 1e8 once meant one 1e8-step call into the compiled loop: Ctrl+C waited minutes."""
    import shutil
    import time
    if not (shutil.which("g++") or shutil.which("clang++")):
        pytest.skip("no host C++ compiler")
    status, _out, err, _mb = run_case(["flint", "luo_rudy_1991", "--runtime", "c", "--t-end", "1"], capfd, monkeypatch)
    assert status == 0, err                                         # compiled (and cached) first
    env = dict(os.environ, GSE_BACKEND="cpu")
    p = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "flint", "luo_rudy_1991", "--runtime", "c",
                          "--every", "100000000", "--t-end", "1e6", "--dt", "0.01"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))   # as in a terminal
    try:
        t0 = time.monotonic()
        while not _in_compiled_loop(p.pid) and p.poll() is None and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        assert _in_compiled_loop(p.pid), "the compiled loop did not start"
        time.sleep(0.5)
        t0 = time.perf_counter()
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=20)
        waited = time.perf_counter() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and err.strip() == "error: interrupted", err
    assert waited < 3.0, f"Ctrl+C took {waited:.1f} s"
