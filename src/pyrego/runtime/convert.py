"""Conversions at the engine's edges: JSON text in and out, values for Python callers."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any

from pyrego.errors import DataError
from pyrego.runtime.bigint import ArithmeticError_, decimal_to_int
from pyrego.runtime.budget import tick
from pyrego.runtime.numbers import exact_number, format_number
from pyrego.runtime.values import BoolKey, CompositeKey, check_plain, sort_key, thaw


def to_json_value(value: Any) -> Any:
    """A value as OPA renders it in JSON: sets become sorted arrays, object keys strings.

    A part shared in ``value`` (the same list twice) is rendered once and
    shared in the result, and the walk checks the evaluation's deadline."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float or t is Decimal:
        return value
    return _to_json(value, {})


def _to_json(value: Any, memo: dict[int, Any]) -> Any:
    t = type(value)
    if t is str or t is int or t is bool or value is None or t is float or t is Decimal:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done[1]
    out: Any
    # (Strings, the common member and value, are taken without a call.)
    if t is list or t is tuple:
        tick(len(value) + 1)
        out = [v if type(v) is str else _to_json(v, memo) for v in value]
    elif t is dict:
        tick(len(value) + 1)
        items: dict[str, Any] = {}
        for k, v in _key_order(value):
            key = k if type(k) is str else _key_text(k)
            items[key] = v if type(v) is str else _to_json(v, memo)
        out = dict(sorted(items.items()))
    elif t is set or t is frozenset:
        tick(len(value) + 1)
        if all(type(k) is str for k in value):
            out = sorted(value)  # (strings sort among themselves by code point, as sort_key orders them)
        else:
            members = sorted((thaw(k) for k in value), key=sort_key)
            out = [_to_json(v, memo) for v in members]
    else:
        check_plain(value)
        raise DataError(f"cannot render {t.__name__} as JSON")
    memo[id(value)] = (value, out)  # (the value is kept: its id stays its own during the walk)
    return out


def _key_order(obj: dict[Any, Any]) -> Any:
    """An object's (key, value) pairs, keys thawed; with a non-string key, in
    OPA's order of keys, so that of keys whose texts collide ("1" and 1,
    set() and []) the last in that order wins, as in OPA's JSON."""
    if all(type(k) is str for k in obj):
        return obj.items()
    return sorted(((thaw(k), v) for k, v in obj.items()), key=lambda kv: sort_key(kv[0]))


def result_json_value(value: Any) -> Any:
    """:func:`to_json_value` for a caller: strings holding bytes that are not
    UTF-8 (kept inside as lone surrogates) get U+FFFD for each such byte, as
    OPA's JSON results have them (``base64url.decode("_-8=")`` is
    ``"\ufffd\ufffd"``); the strings stay whole inside the evaluation.
    A part shared in ``value`` is converted once, and shared."""
    t = type(value)
    if t is str:
        return value if value.isascii() else valid_text(value)
    if t is int or t is bool or value is None or t is float or t is Decimal:
        return value
    return _result_json(value, {})


def _result_json(value: Any, memo: dict[int, Any]) -> Any:
    t = type(value)
    if t is str:
        return value if value.isascii() else valid_text(value)
    if t is int or t is bool or value is None or t is float or t is Decimal:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done[1]
    out: Any
    if t is list or t is tuple:
        out = [_result_json(v, memo) for v in value]
    elif t is dict:
        items: dict[str, Any] = {}
        for k, v in _key_order(value):
            key = (k if k.isascii() else valid_text(k)) if type(k) is str else _key_text(k)
            items[key] = _result_json(v, memo)
        out = dict(sorted(items.items()))
    elif t is set or t is frozenset:
        members = sorted((thaw(k) for k in value), key=sort_key)
        out = [_result_json(v, memo) for v in members]
    else:
        check_plain(value)
        raise DataError(f"cannot render {t.__name__} as JSON")
    memo[id(value)] = (value, out)  # (the value is kept: its id stays its own during the walk)
    return out


def valid_text(s: str) -> str:
    """``s`` with each lone surrogate (a byte that is not UTF-8) made U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", s) if _LONE_SURROGATE.search(s) else s


def json_ready(value: Any) -> Any:
    """A value pyrego returned, as plain JSON-compatible Python: ``json.dumps(json_ready(v))``
    gives the JSON OPA gives for it.

    Takes what :meth:`pyrego.Engine.eval_rule` returns (sets as Python sets,
    their members and non-string keys in hashable form) as well as
    :meth:`~pyrego.Engine.eval_query`'s values. Sets become arrays sorted in
    Rego's order (null, booleans, numbers, strings, arrays, objects, sets);
    objects get string keys, a non-string key becoming its JSON text as in
    OPA (``1`` -> ``"1"``, ``[1]`` -> ``"[1]"``), sorted; ``decimal.Decimal``
    numbers (``1/3`` is ``Decimal('0.33333333333333333334')``, as OPA
    computes it) become ``int`` when integral, else the nearest ``float``.
    ``pyrego.UNDEFINED`` and values that are not Rego values raise
    :class:`~pyrego.DataError`.

    >>> json_ready({"s": {2, "a", (1, 2)}, "n": Decimal("2.50"), "k": {(1,): True}})
    {'k': {'[1]': True}, 'n': 2.5, 's': [2, 'a', [1, 2]]}
    """
    return _plain_numbers(to_json_value(from_python(value)))


def _plain_numbers(value: Any) -> Any:
    """``value`` (as :func:`to_json_value` gives it) with its Decimals made int or float."""
    t = type(value)
    if t is Decimal:
        if value == value.to_integral_value():
            try:
                return decimal_to_int(value)  # (Python's int() is quadratic in the digits)
            except ArithmeticError_ as exc:
                raise DataError(f"cannot render {value:.5E} as an int: {exc}") from None
        return float(value)
    if t is list:
        return [_plain_numbers(v) for v in value]
    if t is dict:
        return {k: _plain_numbers(v) for k, v in value.items()}
    return value


def _key_text(key: Any) -> str:
    """OPA renders a non-string object key as its JSON text, from Go's
    ``json.Marshal``: ``<``, ``>``, ``&``, U+2028 and U+2029 escaped (they
    occur only inside the text's strings)."""
    text = dumps(key)
    if _HTML_UNSAFE.search(text):
        text = _HTML_UNSAFE.sub(lambda m: _HTML_ESCAPES[m.group()], text)
    return text


_HTML_UNSAFE = re.compile("[<>&\u2028\u2029]")
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _encode_float(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        raise DataError("number is not representable in JSON")
    return format_number(x)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """JSON text of a Rego value, numbers printed as OPA prints them.

    A part shared in ``value`` is written once and its text reused; texts
    longer than :data:`MAX_TEXT` characters in all are refused."""
    plain = to_json_value(value)
    return _Dumper(indent).dump(plain, 0)


#: The longest JSON text :func:`dumps` writes (the builtins' string limit).
MAX_TEXT = 1 << 28


class _Dumper:
    """:func:`dumps`'s writer: its indent, the texts of shared parts, and the size written."""

    __slots__ = ("indent", "memo", "size")

    def __init__(self, indent: int | None) -> None:
        self.indent = indent
        self.memo: dict[tuple[int, int], str | None] = {}
        self.size = 0

    def dump(self, v: Any, level: int) -> str:
        t = type(v)
        if t is float:
            return _encode_float(v)
        if t is int:
            return format_number(v)
        if t is Decimal:
            if not v.is_finite():  # (only a Python caller can pass one)
                raise DataError("number is not representable in JSON")
            return format_number(v)
        if t is str:
            return _string_text(v)
        if t is bool:
            return "true" if v else "false"
        if t is not list and t is not dict:
            return json.dumps(v, ensure_ascii=False)
        if not v:
            return "[]" if t is list else "{}"
        # A part met a second time keeps its text (parts met once keep
        # nothing: a deep value's texts would add up to its size times its depth).
        key = (id(v), level)
        seen = key in self.memo
        done = self.memo.get(key)
        if done is not None:
            self._spend(len(done))
            return done
        tick(len(v) + 1)
        indent = self.indent
        # (Strings, the common member and value, are written without a call of dump.)
        if t is list:
            parts = [_string_text(x) if type(x) is str else self.dump(x, level + 1) for x in v]
            text = _join("[", "]", parts, indent, level)
        else:
            sep = ": " if indent is not None else ":"
            parts = [encode_basestring(k) + sep + (_string_text(x) if type(x) is str else self.dump(x, level + 1)) for k, x in v.items()]
            text = _join("{", "}", parts, indent, level)
        self.memo[key] = text if seen else None
        return text

    def _spend(self, size: int) -> None:
        self.size += size
        if self.size > MAX_TEXT:
            raise DataError(f"the JSON text would be longer than the limit of {MAX_TEXT} characters")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _string_text(v: str) -> str:
    """A string's JSON text (what ``json.dumps(v, ensure_ascii=False)`` gives, without
    making an encoder per call); bytes that were not UTF-8 (kept as lone
    surrogates) print as U+FFFD, as in OPA."""
    text: str = encode_basestring(v)
    if text.isascii() or not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def _join(open_: str, close: str, parts: list[str], indent: int | None, level: int) -> str:
    if indent is None:
        return open_ + ",".join(parts) + close
    pad = " " * (indent * (level + 1))
    end = " " * (indent * level)
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + "\n" + end + close


def loads(text: str | bytes, *, what: str = "JSON") -> Any:
    """Parse JSON text into a Rego value, as OPA reads JSON.

    Big integers and numbers no float holds (``1e400``, 30 digits) stay
    exact; a lone surrogate escape (``"\\ud800"``) becomes U+FFFD."""
    try:
        try:
            if type(text) is str and not text.startswith("\ufeff"):
                # One decoder for every call (json.loads makes one per call when given hooks).
                value = _DECODER.decode(text)
            else:
                value = json.loads(text, parse_constant=reject_json_constant, parse_float=_parse_float)
        except ValueError as exc:
            if "integer string conversion" not in str(exc):
                raise
            # An integer of more than 4,300 digits, which Python's reader refuses.
            from pyrego.runtime.numbers import parse_number

            value = json.loads(text, parse_constant=reject_json_constant, parse_float=_parse_float, parse_int=parse_number)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"malformed {what}: {exc}") from None
    escaped = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
    if "\\ud" in escaped or "\\uD" in escaped:
        value = _replace_lone_surrogates(value)
    return value


def _parse_float(text: str) -> Any:
    f = float(text)
    if repr(f) == text:
        return f  # the usual case: the text is the float's own
    if f - f != 0 or (not f and any(c in "123456789" for c in text.partition("e")[0].partition("E")[0])):
        # Past the float range (1e400) or below it (1e-400): the exact number.
        return exact_number(Decimal(text))
    from pyrego.runtime.numbers import literal_number

    return literal_number(Decimal(text)) if "." in text or "e" in text or "E" in text else f


def _replace_lone_surrogates(value: Any) -> Any:
    """``value`` with each unpaired surrogate in its strings made U+FFFD (a loop: values may be deep)."""

    def fix(s: str) -> str:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if _LONE_SURROGATE.search(s) else s

    root = [value]
    stack: list[Any] = [root]
    while stack:
        container = stack.pop()
        if type(container) is list:
            for i, v in enumerate(container):
                if type(v) is str:
                    container[i] = fix(v)
                elif type(v) is list or type(v) is dict:
                    stack.append(v)
        else:
            for k in list(container):
                v = container[k]
                if type(v) is str:
                    v = fix(v)
                elif type(v) is list or type(v) is dict:
                    stack.append(v)
                nk = fix(k)
                if nk is not k:
                    del container[k]
                container[nk] = v
    return root[0]


def reject_json_constant(name: str) -> Any:
    """The ``parse_constant`` hook of every JSON reader in pyrego: Python's
    :mod:`json` takes ``NaN``, ``Infinity`` and ``-Infinity``, JSON (and OPA)
    does not. Raises :class:`ValueError` with the message Go's
    ``encoding/json`` gives for them (OPA's own words): each reader turns it
    into its own error, as it does for any other malformed text."""
    if name[0] == "-":
        raise ValueError(f"invalid character '{name[1]}' in numeric literal")
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


_DECODER = json.JSONDecoder(parse_constant=reject_json_constant, parse_float=_parse_float)


class FrozenObject(frozenset):  # type: ignore[type-arg]
    """An object where Python needs a hashable value (a set member, an object key):
    the frozenset of its ``(key, value)`` pairs. It equals (and hashes as) the plain
    frozenset of those pairs; its type tells it apart from a set of 2-element arrays."""

    __slots__ = ()


#: The frozen forms of values (a set member or object key given as a value).
_KEYS = frozenset((BoolKey, *CompositeKey.__subclasses__()))


def to_python(value: Any) -> Any:
    """A value for a Python caller: sets are Python sets of hashable members.

    Bytes that are not UTF-8 in strings come back as U+FFFD, as in OPA's
    results (see :func:`result_json_value`).

    Set members and non-string object keys come back in a hashable form:
    arrays as tuples, objects as frozensets of (key, value) pairs
    (:class:`FrozenObject`), sets as frozensets, booleans as bool.
    """
    t = type(value)
    if t is str:
        return value if value.isascii() else valid_text(value)
    if t is int or t is float or t is bool or value is None or t is Decimal:
        return value
    return _to_python(value, {})


def _to_python(value: Any, memo: dict[int, Any]) -> Any:
    """:func:`to_python` of a composite; a part shared in ``value`` is converted once, and shared."""
    t = type(value)
    if t is str:
        return value if value.isascii() else valid_text(value)
    if t is int or t is float or t is bool or value is None or t is Decimal:
        return value
    if t is not list and t is not tuple and t is not dict and t is not set and t is not frozenset:
        if t not in _KEYS:
            check_plain(value)  # (a caller's object: never handed back as if converted)
        return value
    done = memo.get(id(value))
    if done is not None:
        return done[1]
    # (No deadline check: results are converted after their evaluation, in
    # time linear in what the evaluation built.)
    # (ASCII strings, the common member, key and value, are taken without a call.)
    if t is list or t is tuple:
        out: Any = [v if type(v) is str and v.isascii() else _to_python(v, memo) for v in value]
    elif t is dict:
        out = {
            (k if type(k) is str and k.isascii() else _hashable(k)): (v if type(v) is str and v.isascii() else _to_python(v, memo))
            for k, v in value.items()
        }
    else:
        out = {k if type(k) is str and k.isascii() else _hashable(k) for k in value}
    memo[id(value)] = (value, out)  # (the value is kept: its id stays its own during the walk)
    return out


def _hashable(key: Any) -> Any:
    t = type(key)
    if t is str:
        return key if key.isascii() else valid_text(key)
    if t is int or t is float or key is None:
        return key
    if t is BoolKey:
        return key.value
    if isinstance(key, CompositeKey):
        from pyrego.runtime.values import ArrayKey, ObjectKey

        if t is ArrayKey:
            return tuple(_hashable(k) for k in key.items)
        if t is ObjectKey:
            return FrozenObject((_hashable(k), _hashable(v)) for k, v in key.items)
        return frozenset(_hashable(k) for k in key.items)
    if t is not Decimal and t is not bool:
        check_plain(key)  # (a caller's object key of another type)
    return key


def from_python(value: Any, *, _depth: int = 0) -> Any:
    """Check (and, only where needed, convert) a caller's value into the value model.

    JSON-like values pass through untouched (no copy). Tuples are arrays;
    ``Decimal`` numbers become int/float where that is exact (else stay
    ``Decimal``); dict keys that are not strings are
    frozen. Anything else is a :class:`DataError`.
    """
    from pyrego.runtime.values import freeze

    if _depth > 10000:
        raise DataError("value nested too deeply")
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is float:
        if math.isnan(value) or math.isinf(value):
            raise DataError("NaN and infinite numbers are not Rego values")
        return value
    if t is Decimal:
        if not value.is_finite():
            raise DataError("NaN and infinite numbers are not Rego values")
        from pyrego.runtime.numbers import exact_number

        return exact_number(value)
    if t is list:
        changed = None
        for i, v in enumerate(value):
            if type(v) is str:
                continue  # (the common member, taken without a call)
            c = from_python(v, _depth=_depth + 1)
            if c is not v:
                if changed is None:
                    changed = list(value)
                changed[i] = c
        return value if changed is None else changed
    if t is tuple:
        return [from_python(v, _depth=_depth + 1) for v in value]
    if t is dict:
        need_copy = False
        items = []
        for k, v in value.items():
            ck = k if type(k) is str else freeze(from_python(k, _depth=_depth + 1))
            cv = v if type(v) is str else from_python(v, _depth=_depth + 1)
            if ck is not k or cv is not v:
                need_copy = True
            items.append((ck, cv))
        return dict(items) if need_copy else value
    if t is set or t is frozenset:
        return frozenset([v if type(v) is str else freeze(from_python(v, _depth=_depth + 1)) for v in value])
    if t is FrozenObject:  # an object in to_python's hashable form
        return from_python(dict(value), _depth=_depth + 1)
    if isinstance(value, BoolKey) or isinstance(value, CompositeKey):
        return thaw(value)
    raise DataError(f"{t.__name__} is not a Rego value")
