"""Masking a decision log event as OPA does (``data.system.log.mask``).

The mask decision is a set of rules, each a string (a pointer to erase) or an
object ``{"op": "remove"|"upsert", "path": pointer, "value": any}``. The
pointers are OPA's, not RFC 6901's: slash-separated keys under ``/input``,
``/result`` or ``/nd_builtin_cache``, each key percent-escaped as a URL path
segment (Go's ``url.PathEscape``) before it is looked up, with no ``~0``/``~1``
decoding; array elements by decimal index. A malformed rule set is an error
(OPA then logs nothing for the event); a pointer to undefined data is skipped
and not recorded. Erased pointers go to the event's ``erased`` list, upserted
ones to ``masked``, in the order of the rule set (a set: sorted as OPA sorts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

_ROOTS = ("input", "result", "nd_builtin_cache")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Go's url.PathEscape leaves these unescaped besides letters, digits and "-_.~".
_SEGMENT_SAFE = "$&+:=@"


class MaskError(ValueError):
    """A mask rule set OPA refuses (the event is then not logged)."""


class _Undefined(Exception):
    """A pointer to data that is not there: the rule is skipped."""


@dataclass(frozen=True)
class MaskRule:
    """One mask rule: ``op`` (``remove`` or ``upsert``), the escaped path parts, the value."""

    op: str
    parts: tuple[str, ...]
    value: Any = None

    @property
    def pointer(self) -> str:
        """The pointer as recorded in ``erased``/``masked``: the escaped parts joined."""
        return "/" + "/".join(self.parts)


def _make_rule(path: Any, op: str = "remove", value: Any = None) -> MaskRule:
    if not isinstance(path, str) or path == "":
        raise MaskError("mask must be non-empty")
    if not path.startswith("/"):
        raise MaskError("mask must be slash-prefixed")
    raw = path[1:].split("/")
    if raw[0] not in _ROOTS:
        raise MaskError(f"mask prefix not allowed: {raw[0]}")
    parts = []
    for part in raw:
        if _BAD_ESCAPE.search(part):
            bad = _BAD_ESCAPE.search(part)
            assert bad is not None
            raise MaskError(f'invalid URL escape "{part[bad.start() : bad.start() + 3]}"')
        parts.append(quote(part, safe=_SEGMENT_SAFE))
    if op not in ("remove", "upsert"):
        raise MaskError(f"mask op is not supported: {op}")
    return MaskRule(op, tuple(parts), value)


def parse_mask_rules(value: Any) -> list[MaskRule]:
    """The rules of a mask decision's value (a set, as a JSON array); :class:`MaskError`
    for what OPA refuses: a non-array, a member neither string nor object, a bad
    prefix, a missing slash, a missing or unknown ``op``, a bad ``%`` escape."""
    if not isinstance(value, list):
        raise MaskError(f"unexpected rule format {value!r}")
    rules = []
    for item in value:
        if isinstance(item, str):
            rules.append(_make_rule(item))
        elif isinstance(item, dict):
            op = item.get("op", "")
            if "op" in item and not isinstance(op, str):
                raise MaskError(f'invalid "op" value: {op!r}')
            if "op" in item and op == "":
                raise MaskError(f'invalid "op" value: {op!r}')
            path = item.get("path", "")
            if "path" in item and (not isinstance(path, str) or path == ""):
                raise MaskError(f'invalid "path" value: {path!r}')
            # (OPA checks the path before the op: an object without a path
            # fails as an empty mask.)
            if not isinstance(path, str) or path == "":
                raise MaskError("mask must be non-empty")
            rules.append(_make_rule(path, op, item.get("value")))
        else:
            raise MaskError(f"invalid mask rule format encountered: {type(item).__name__}")
    return rules


def _index(key: str, size: int, *, grow: bool = False) -> int:
    # strconv.Atoi: an optional sign and decimal digits.
    if not re.fullmatch(r"[+-]?[0-9]+", key):
        raise _Undefined
    i = int(key)
    if i < 0 or (i >= size and not grow):
        raise _Undefined
    return i


def _remove(parts: tuple[str, ...], node: Any) -> None:
    """Remove the element at ``parts`` under ``node`` (OPA's ``removeValue``)."""
    target = parts[-1]
    parent: Any = None
    for key in parts[:-1]:
        if isinstance(node, dict):
            if key not in node:
                raise _Undefined
            parent, node = node, node[key]
        elif isinstance(node, list):
            i = _index(key, len(node))
            parent, node = node, node[i]
        else:
            raise _Undefined
    if isinstance(node, dict):
        if target not in node:
            raise _Undefined
        del node[target]
    elif isinstance(node, list):
        i = _index(target, len(node))
        # As OPA: an array element is removed through the array's parent, so an
        # array at the root of the masked part (``/input/0`` of an array input)
        # is left as it is.
        if parent is None:
            raise _Undefined
        del node[i]
    else:
        raise _Undefined


def _upsert(parts: tuple[str, ...], node: Any, value: Any) -> None:
    """Set ``value`` at ``parts`` under the object ``node``, making missing objects
    on the way (OPA's ``mkdirp``); an index past an array's end is undefined."""
    for key in parts[:-1]:
        if isinstance(node, dict):
            if key not in node:
                node[key] = {}
            node = node[key]
        elif isinstance(node, list):
            i = _index(key, len(node), grow=True)
            # (OPA grows a copy of the array, not the array itself: past its
            # end the walk meets null.)
            node = node[i] if i < len(node) else None
        else:
            raise _Undefined
    last = parts[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        node[_index(last, len(node))] = value
    else:
        raise _Undefined


def apply_mask(rules: list[MaskRule], event: dict[str, Any]) -> None:
    """Apply ``rules`` to ``event`` (a private copy: it is changed in place), recording
    ``erased`` and ``masked`` pointers as OPA does. An absent part is skipped."""
    erased: list[str] = list(event.get("erased") or ())
    masked: list[str] = list(event.get("masked") or ())
    for rule in rules:
        root = rule.parts[0]
        if root not in event:
            continue
        rest = rule.parts[1:]
        if rule.op == "remove":
            if not rest:
                del event[root]
            else:
                try:
                    _remove(rest, event[root])
                except _Undefined:
                    continue
            erased.append(rule.pointer)
        else:
            if not rest:
                event[root] = rule.value
            else:
                obj = event[root]
                if not isinstance(obj, dict):
                    continue
                try:
                    _upsert(rest, obj, rule.value)
                except _Undefined:
                    continue
            masked.append(rule.pointer)
    if erased:
        event["erased"] = erased
    if masked:
        event["masked"] = masked
