"""A decision's value as the JSON tree of a response, within the request's time limit.

An evaluation can build a value far larger written out than in memory: parts
are shared (``a1 := [a0, a0]``, ..., ``a30 := [a29, a29]`` is 31 arrays, and
2^30 of them in JSON). The evaluation's time limit ends the evaluation, not
the writing of its result, so the conversion is counted against the same
deadline: the tree made here has no shared parts (each occurrence is its own
copy), every node of it is counted, and once the deadline passes the request
ends with OPA's ``eval_cancel_error``, as an evaluation past its limit does.
The JSON encoder then writes a tree whose size was paid for here.
"""

from __future__ import annotations

from typing import Any

from pyrego.runtime.budget import HasDeadline, tick
from pyrego.runtime.convert import from_python, to_json_value


class Deadline(HasDeadline):
    """What the value walks' deadline check finds in a caller's ``ctx`` (see
    :mod:`pyrego.runtime.budget`)."""

    __slots__ = ("deadline",)

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline


def render(value: Any, deadline: float | None) -> Any:
    """``value`` (as ``Engine.eval_rule`` gives it) as OPA writes it in JSON,
    with no part shared; raises :class:`pyrego.EvalCancelError` once
    ``deadline`` (a ``time.monotonic()`` time; None: none) has passed."""
    ctx = Deadline(deadline)  # noqa: F841 - found on the stack by the walks' deadline checks
    return _tree(value)


def unshared(tree: Any, deadline: float | None) -> Any:
    """A JSON tree (lists, string-keyed dicts, scalars, as ``eval_query``
    gives them) with every shared part copied, key order kept; raises
    :class:`pyrego.EvalCancelError` once ``deadline`` has passed."""
    ctx = Deadline(deadline)  # noqa: F841 - found on the stack by the walks' deadline checks
    return _unshared(tree)


def _tree(value: Any) -> Any:
    """``value``'s JSON tree, each node made and counted where it occurs."""
    t = type(value)
    if t is str or t is int or t is bool or value is None or t is float:
        return value
    if t is list:
        tick(len(value) + 1)
        return [v if type(v) is str else _tree(v) for v in value]
    if t is dict:
        tick(len(value) + 1)
        if all(type(k) is str for k in value):
            return dict(sorted([(k, v if type(v) is str else _tree(v)) for k, v in value.items()]))
        # Keys of other types: their texts (and which of the keys whose texts
        # collide is kept, as OPA keeps it) from the general conversion.
        keys = list(value)
        texts = to_json_value(from_python({k: i for i, k in enumerate(keys)}))
        return {text: _tree(value[keys[i]]) for text, i in texts.items()}
    # Sets (of hashable members), Decimals: the general conversion of this node.
    return _unshared(to_json_value(from_python(value)))


def _unshared(tree: Any) -> Any:
    """A JSON tree (lists, string-keyed dicts, scalars) with every shared part copied."""
    t = type(tree)
    if t is list:
        tick(len(tree) + 1)
        return [v if type(v) is str else _unshared(v) for v in tree]
    if t is dict:
        tick(len(tree) + 1)
        return {k: v if type(v) is str else _unshared(v) for k, v in tree.items()}
    return tree


__all__ = ["Deadline", "render", "unshared"]
