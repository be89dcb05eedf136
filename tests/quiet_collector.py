"""Timing an evaluation without the cyclic collector's passes over other tests' objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def earlier_objects_set_aside() -> Iterator[None]:
    """Set the objects already in this process aside from the cyclic collector
    while the block runs: late in a full run there are millions, and one full
    collection over them (which no deadline can interrupt) would be timed as
    the engine's."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
