"""One registry type for every "choose an implementation by name" table of the app (issue 37).

A :class:`Registry` maps names to classes (or other objects: commands, workspaces, launch
records).  It is read by the CLI (``--method`` choices and help), the GUI (lists and tooltips) and
the refusals (an unknown name is one error naming the choices), so every table behaves the same:

- :meth:`Registry.register` adds an entry under its ``name`` attribute (or an explicit name), as a
  class decorator or a call.  Registering a second, different object under a taken name is an
  error (``ValueError``: a programming mistake, found at import); registering the very same object
  again is a no-op, so re-importing a module is harmless.  ``replace=True`` is the one way to
  overwrite (the launch registry records the latest launch shape of a kernel).
- An entry may be a lazy ``"package.module:Attribute"`` string (as :mod:`kernels.flint.schemes`
  does), imported the first time it is looked up: registration stays explicit in a package's
  ``__init__`` without importing optional dependencies (CuPy) or slow modules at start-up.
- :meth:`Registry.get` returns the entry for a name, or accepts the entry itself (a class is accepted
  wherever a name is, as ``scipy.integrate.solve_ivp(method=…)`` accepts ``"RK45"`` or ``RK45``);
  an unknown name raises :class:`~kernels.errors.InvalidParameter` naming the choices.
- :meth:`Registry.names` lists names in registration order, filtered by attribute values
  (``METHODS.names(gpu=True)``); :meth:`Registry.help` gives one line per entry.

It is also a read-only :class:`~collections.abc.Mapping` (``name in reg``, ``reg[name]``,
``reg.items()``), so code that read the old dicts reads it unchanged.
"""
from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from typing import Any, Callable, Generic, Iterator, TypeVar

from .errors import InvalidParameter

T = TypeVar("T")
_MISSING = object()


def _first_line(obj) -> str:
    text = getattr(obj, "help", None)
    if not isinstance(text, str) or not text:
        text = (getattr(obj, "__doc__", None) or "").strip()
    return text.splitlines()[0].strip() if text else ""


class Registry(Mapping, Generic[T]):
    """Named entries of one kind (``kind`` names it in errors: "APSP method", "layout", …).

    ``key``: how an entry names itself when registered without an explicit name (default: its
    ``name`` attribute).  ``base``: when given, :meth:`get` also accepts an unregistered subclass
    (or instance) of it, as scipy accepts any ``OdeSolver`` subclass."""

    def __init__(self, kind: str, *, key: Callable[[Any], str] | None = None, base: type | None = None):
        self.kind = str(kind)
        self._key = key or (lambda obj: getattr(obj, "name", ""))
        self._base = base
        self._entries: dict[str, Any] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ registration
    def register(self, obj: Any = None, *, name: str | None = None, replace: bool = False):
        """Add ``obj`` under ``name`` (default: its ``name`` attribute); usable as ``@reg.register``.
        Returns ``obj``.  A different object under a taken name → ValueError (unless ``replace``)."""
        if obj is None:
            return lambda o: self.register(o, name=name, replace=replace)
        key = str(name if name is not None else (obj.split(":")[-1] if isinstance(obj, str) else self._key(obj)))
        if not key:
            raise ValueError(f"a {self.kind} needs a non-empty name ({obj!r})")
        with self._lock:
            old = self._entries.get(key, _MISSING)
            if old is not _MISSING and old is not obj and not replace and not self._same(old, obj):
                raise ValueError(f"{self.kind} {key!r} is registered twice ({old!r} and {obj!r})")
            self._entries[key] = obj
        return obj

    @staticmethod
    def _same(old, new) -> bool:
        """A lazy string and the object it names are the same entry (resolved later)."""
        if isinstance(old, str) and not isinstance(new, str):
            mod, _, attr = old.partition(":")
            return getattr(new, "__module__", None) == mod and getattr(new, "__name__", None) == attr
        return False

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests; the launch registry's ``forget``)."""
        with self._lock:
            self._entries.pop(name, None)

    # ------------------------------------------------------------------ lookup
    def _resolve(self, key: str):
        entry = self._entries[key]
        if isinstance(entry, str):
            mod, _, attr = entry.partition(":")
            entry = getattr(importlib.import_module(mod), attr)
            with self._lock:
                self._entries[key] = entry
        return entry

    def get(self, name, default=_MISSING):
        """The entry for ``name``; an entry itself (or, with ``base``, a subclass or instance of it) is
        returned as is.  Unknown → ``default`` when given, else InvalidParameter naming the choices."""
        if not isinstance(name, str):
            if name in self._entries.values() or self._accepts(name):
                return name
            for key, entry in list(self._entries.items()):
                if isinstance(entry, str) and self._same(entry, name):
                    return self._resolve(key)
            if default is not _MISSING:
                return default
            raise InvalidParameter(f"{name!r} is not a registered {self.kind}: use one of {', '.join(self)}")
        if name in self._entries:
            return self._resolve(name)
        if default is not _MISSING:
            return default
        raise InvalidParameter(f"unknown {self.kind} {name!r}: use one of {', '.join(self) or '(none)'}")

    def _accepts(self, obj) -> bool:
        b = self._base
        return b is not None and ((isinstance(obj, type) and issubclass(obj, b)) or isinstance(obj, b))

    def name_of(self, obj) -> str:
        """The registered name of ``obj`` (a name is returned checked)."""
        if isinstance(obj, str):
            self.get(obj)
            return obj
        for key in self:
            if self._entries[key] is obj or (isinstance(self._entries[key], str) and self._same(self._entries[key], obj)):
                return key
        return self._key(self.get(obj))

    def names(self, **filters) -> list[str]:
        """Names in registration order whose entries have every attribute equal to ``filters``
        (a callable filter value is called with the attribute's value instead)."""
        out = []
        for key in list(self._entries):
            if not filters:
                out.append(key)
                continue
            entry = self._resolve(key)
            ok = True
            for attr, want in filters.items():
                have = getattr(entry, attr, _MISSING)
                ok = ok and have is not _MISSING and (want(have) if callable(want) else have == want)
            if ok:
                out.append(key)
        return out

    def help(self, **filters) -> str:
        """One line per entry: ``name — first line of its help or docstring``."""
        return "\n".join(f"{k} — {_first_line(self._resolve(k))}".rstrip(" —") for k in self.names(**filters))

    # ------------------------------------------------------------------ Mapping
    def __getitem__(self, name):
        try:
            return self._resolve(name)
        except KeyError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self)})"
