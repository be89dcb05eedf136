"""A dict bounded to the entries used last (compiled queries, kept per engine and per program)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


class BoundedDict(OrderedDict[_K, _V]):
    """A dict that keeps the ``size`` entries set or read last.

    Races between threads can only drop an entry early (a recompilation),
    never keep one too many for long or raise."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get(self, key: _K, default: Any = None) -> Any:
        value = super().get(key, default)
        if value is not default:
            try:
                self.move_to_end(key)
            except KeyError:
                pass
        return value

    def __setitem__(self, key: _K, value: _V) -> None:
        super().__setitem__(key, value)
        while len(self) > self.size:
            try:
                self.popitem(last=False)
            except KeyError:
                break

    def copy(self) -> BoundedDict[_K, _V]:
        new: BoundedDict[_K, _V] = BoundedDict(self.size)
        new.update(self)
        return new
