"""How the Cahn–Hilliard field is split over GPUs (paper 001 §4.6) or CPU threads, as the status
bar and the message bar tell it.

:func:`fit_gpus` cuts a parameter set to the GPUs this machine offers (settings, sessions and files
from another machine).  :class:`DecompositionReport` is a part that owns what was last shown: after
every possible rebuild of the stepper, :meth:`DecompositionReport.sync` reads the simulation's
``decomposition()`` and ``notes`` and, when they changed, returns the new summary (and shows the
notes in the message bar it was given, or hides them when they no longer apply).
"""
from __future__ import annotations

from kernels.cahn_hilliard.multigpu import VIRTUAL_ENV
from kernels.cahn_hilliard.params import CHParams


def fit_gpus(p: CHParams, offered: int, is_gpu: bool) -> tuple[CHParams, str]:
    """``p`` with at most ``offered`` GPUs, and a note when it had to cut them ("" otherwise)."""
    if p.gpus <= offered:
        return p, ""
    note = (f"{p.gpus} GPUs were asked for; this machine offers {offered}"
            + ("" if offered > 1 or is_gpu else f" (set {VIRTUAL_ENV}=N for N virtual GPUs)")
            + f": running on {offered} GPU{'s' if offered > 1 else ''}")
    return p.with_changes(gpus=offered), note


def describe_decomposition(d: dict) -> str:
    """Status-bar summary, e.g. "2 GPUs · p2p · slabs of 128/128 rows" ("" on one GPU)."""
    P = d.get("gpus", 1)
    if d.get("threads"):
        return f"cpu-threads · {d['threads']} thread{'s' if d['threads'] != 1 else ''} (OpenMP)"
    if P < 2 or "slab_rows" not in d:
        return ""
    sizes = [y1 - y0 for y0, y1 in d["slab_rows"]]
    unit = "z planes" if d.get("dim", 2) == 3 else "rows"
    if len(sizes) <= 4:
        slabs = f"slabs of {'/'.join(map(str, sizes))} {unit}"
    elif min(sizes) == max(sizes):
        slabs = f"slabs of {sizes[0]} {unit}"
    else:
        slabs = f"slabs of {min(sizes)}–{max(sizes)} {unit}"
    gpus = f"{P} virtual GPUs" if d.get("virtual_gpus") else f"{P} GPUs"
    graphs = " · CUDA graphs" if d.get("cuda_graphs") else ""
    return f"{gpus} · {d.get('exchange', '?')} · {slabs}{graphs}"


class DecompositionReport:
    """The decomposition last shown and the notes in the message bar (``message_bar``: an
    :class:`explorer.widgets.MessageBar`)."""

    def __init__(self, message_bar):
        self.message_bar = message_bar
        self.decomposition: dict = {"gpus": 1, "notes": []}
        self.text = ""                     # status-bar summary, "" on one GPU
        self._seen = (None, 0, None)       # (stepper, number of notes, threads) shown
        self._notes_msg = ""               # the message-bar text of the notes shown

    def sync(self, sim) -> bool:
        """Read ``sim``'s decomposition and notes; True when they changed (then ``decomposition``
        and ``text`` are new and the notes are in the message bar)."""
        st, notes = sim.stepper, sim.notes
        seen = (st, len(notes), getattr(st, "threads", None))
        if seen[0] is self._seen[0] and seen[1:] == self._seen[1:]:
            return False
        self._seen = seen
        d = dict(sim.decomposition())
        d["dim"] = sim.params.dim
        self.decomposition = d
        self.text = describe_decomposition(d)
        if notes:
            p = sim.params
            honoured = d["gpus"] == p.gpus and d.get("exchange", p.exchange) == p.exchange
            self._notes_msg = "Multi-GPU: " + "; ".join(notes) + "."
            self.message_bar.show_message(self._notes_msg, "info" if honoured else "warning")
        elif self._notes_msg and self.message_bar.text() == self._notes_msg:
            self.message_bar.hide()             # the old notes no longer apply
            self._notes_msg = ""
        return True

    def notes_changed(self, sim) -> bool:
        """A note from stepping (e.g. CUDA graphs) not shown yet."""
        return len(sim.notes) != self._seen[1]

    def notes_tail(self, sim) -> str:
        """The notes, to append to another message shown after a rebuild (which replaces them)."""
        if not sim.notes:
            return ""
        self._notes_msg = ""
        return " — Multi-GPU: " + "; ".join(sim.notes) + "."

    def slab_starts(self) -> list[int]:
        """First rows of the slabs after the first (the overlay's lines)."""
        return [y0 for y0, _y1 in self.decomposition.get("slab_rows", [])][1:]
