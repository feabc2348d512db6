"""Shared by the benchmark scripts: save the printed markdown table where the device tool fetches it,
and time one call with the device's queue drained."""
from __future__ import annotations

import os
import time


def timed(fn, sync=None) -> float:
    """Seconds one call of ``fn`` takes (``sync`` before and after: the device's queue drained)."""
    if sync:
        sync()
    t0 = time.perf_counter()
    fn()
    if sync:
        sync()
    return time.perf_counter() - t0


def save_markdown(filename: str, text: str) -> None:
    """Write ``text`` (one trailing newline) to ``$OUT/filename`` when $OUT is set (the device machine's
    result folder, created if missing); nothing otherwise."""
    out = os.environ.get("OUT")
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, filename), "w", encoding="utf-8") as fh:
        fh.write(text.rstrip("\n") + "\n")
