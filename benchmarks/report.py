"""Shared by the benchmark scripts: save the printed markdown table where the device tool fetches it."""
from __future__ import annotations

import os


def save_markdown(filename: str, text: str) -> None:
    """Write ``text`` (one trailing newline) to ``$OUT/filename`` when $OUT is set (the device machine's
    result folder, created if missing); nothing otherwise."""
    out = os.environ.get("OUT")
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, filename), "w", encoding="utf-8") as fh:
        fh.write(text.rstrip("\n") + "\n")
