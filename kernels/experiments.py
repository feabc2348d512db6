"""Paper experiments: one figure or table of a paper, re-run, as one class (issue 37 §2).

An :class:`Experiment` subclass says what a figure or table is and what the paper found:

- ``name`` (a registry key, e.g. ``"paper000-fig14"``), ``title`` (the paper's figure or table) and
  ``columns`` (the CSV columns, in order);
- :meth:`Experiment.rows` — the experiment run: an iterator of finished rows, one measured point
  each (the system's row dataclass; :func:`row_dict` gives any row as a dict), so a caller (the CLI,
  a GUI tab, a sweep task) streams, cancels and counts them the same way; :meth:`Experiment.defaults`
  — the settings of a default run (what the GUI's generic experiment tab runs);
- :meth:`Experiment.claims` — what the paper says, checked against rows: a list of
  :class:`Claim` ``(text, held, detail)`` (``held`` None: these rows do not measure it);
- :meth:`Experiment.to_csv` — the rows as CSV through the project's atomic writer
  (:func:`kernels.fileio.atomic_write`), one line per row (:meth:`Experiment.table` formats the cells);
- :meth:`Experiment.points` — independent parts of a run (a sweep task runs each on a worker);
- :meth:`Experiment.order_key` — the serial order of rows (rows arriving from a cluster in completion
  order are shown in it) and :meth:`Experiment.problem` — a row's own failed check (e.g. a method's
  distances unlike the reference's), as one sentence, or None.

:func:`rows_to_csv` is the one CSV writer of every experiment.  Shared layer: this module imports no
system; Qt-free.
"""
from __future__ import annotations

import csv
from dataclasses import asdict, is_dataclass
from typing import Any, ClassVar, Iterable, Iterator, NamedTuple

from .fileio import atomic_write


class Claim(NamedTuple):
    """One statement of the paper checked against measured rows."""

    text: str                   #: what the paper says (one line, with its number)
    held: bool | None           #: True / False as measured; None when the rows do not measure it
    detail: str                 #: the measured numbers behind the verdict

    @property
    def verdict(self) -> str:
        return "not measured" if self.held is None else ("holds" if self.held else "does NOT hold")


def row_dict(row) -> dict:
    """A row as a dict: its ``to_dict()`` / ``as_dict()`` when it has one, a dataclass's fields, or a
    mapping copied."""
    for attr in ("to_dict", "as_dict"):
        fn = getattr(row, attr, None)
        if callable(fn):
            return dict(fn())
    if is_dataclass(row) and not isinstance(row, type):
        return asdict(row)
    return dict(row)


def rows_to_csv(columns: Iterable[str], table: Iterable[Iterable[Any]], path) -> None:
    """Write a header of ``columns`` and one line per row of ``table`` (cells in column order) to
    ``path`` as CSV, atomically: the file is whole or, on any failure, as it was before."""
    columns = tuple(columns)
    with atomic_write(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for cells in table:
            w.writerow(list(cells))


class Experiment:
    """One figure or table of a paper (see the module docstring).  Subclasses set ``name``,
    ``title`` and ``columns`` and implement :meth:`rows`; :meth:`claims`, :meth:`table`,
    :meth:`order_key` and :meth:`problem` have defaults (no claims, cells by column name, arrival
    order, no check)."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()
    #: units of the columns (column → unit, e.g. {"seconds": "s"}), shown in the GUI's tooltips
    units: ClassVar[dict[str, str]] = {}
    #: the row dataclass of :meth:`rows` (rebuilt from dicts by :meth:`row_from_dict`; None: dicts)
    row_type: ClassVar[type | None] = None

    #: the list-valued settings of :meth:`rows` a sweep splits into independent points (one value
    #: each; their product), e.g. ``("types", "sizes")``
    split: ClassVar[tuple[str, ...]] = ()

    @property
    def help(self) -> str:
        return self.title

    def points(self, **settings) -> list[dict]:
        """The settings of each independent point of a run with ``settings``: the product of the
        :attr:`split` settings' values, one value each (as a one-element list), the rest as given;
        ``[settings]`` when nothing splits.  ``rows(**point)`` over the points, concatenated, are the
        rows of ``rows(**settings)`` (a sweep task runs each point on a worker)."""
        out = [dict(settings)]
        for key in self.split:
            if key in settings:
                out = [{**p, key: [v]} for p in out for v in settings[key]]
        return out

    def defaults(self) -> dict:
        """The settings of a default run: the GUI's generic experiment tab runs ``rows(**defaults())``
        (plus ``backend`` / ``cancel`` where :meth:`rows` names them); ``{}`` when it needs none."""
        return {}

    def rows(self, *args, **settings) -> Iterator:
        """Run the experiment: yield each finished row (a row object, see :func:`row_dict`)."""
        raise NotImplementedError

    def claims(self, rows) -> list[Claim]:
        """The paper's statements checked against ``rows``."""
        return []

    def columns_for(self, rows) -> tuple[str, ...]:
        """The CSV columns of ``rows`` (default :attr:`columns`)."""
        return tuple(self.columns)

    def table(self, rows) -> Iterator[list]:
        """The CSV cells of ``rows``, one list per row in :meth:`columns_for` order (override to format
        or to add derived columns that need every row, e.g. normalised times)."""
        cols = self.columns_for(rows)
        for r in rows:
            d = row_dict(r)
            yield [d.get(c, "") for c in cols]

    def to_csv(self, rows, path) -> None:
        """``rows`` as CSV at ``path`` (atomic: :func:`rows_to_csv`)."""
        rows = list(rows)
        rows_to_csv(self.columns_for(rows), self.table(rows), path)

    def order_key(self, row):
        """Sort key of the serial order (None: keep the arrival order)."""
        return None

    def ordered(self, rows) -> list:
        """``rows`` in the serial order (a cluster's completion order → the serial one)."""
        rows = list(rows)
        if rows and self.order_key(rows[0]) is not None:
            rows.sort(key=self.order_key)
        return rows

    def problem(self, row) -> str | None:
        """A row's own failed check as one sentence (a warning for the user), or None."""
        return None

    def row_from_dict(self, d: dict):
        """A row object from its dict (a sweep's stored row); fields the row type lacks are dropped and
        fields the dict lacks keep their defaults."""
        cls = self.row_type
        if cls is None:
            return dict(d)
        names = getattr(cls, "__dataclass_fields__", {})
        return cls(**{k: v for k, v in d.items() if k in names})

    def __repr__(self) -> str:
        return f"<experiment {self.name}: {self.title}>"
