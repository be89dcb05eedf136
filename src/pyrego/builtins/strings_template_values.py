"""Go values and template functions for ``strings.render_template``.

The variables object reaches Go's ``text/template`` as Go JSON values:
objects are ``map[string]interface {}``, arrays ``[]interface {}``, numbers
``json.Number`` (a *string* type holding the number's text, so it prints as
written and is always "true" in a condition). This module holds those values,
how Go prints and tests them, and the template functions (``eq``, ``len``,
``printf``, ...), with Go's error texts.
"""

from __future__ import annotations

import html as _html
import urllib.parse
from decimal import Decimal
from typing import Any, Callable

from pyrego.builtins.sprintf import go_sprintf_args
from pyrego.runtime.numbers import format_number
from pyrego.runtime.values import sort_key, thaw

# ---------------------------------------------------------------- Go values


class Number(str):
    """Go's ``json.Number``: a string type holding a number's text."""

    __slots__ = ()


class _NoValue:
    """A missing map entry (Go's invalid reflect.Value): prints ``<no value>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()


def to_go(value: Any) -> Any:
    """A Rego value as the Go JSON value OPA hands the template."""
    t = type(value)
    if t is str or t is bool or value is None:
        return value
    if t is int:
        return Number(str(value))
    if t is float or t is Decimal:
        return Number(format_number(value))
    if t is list or t is tuple:
        return [to_go(v) for v in value]
    if t is dict:
        return {_key_text(k): to_go(v) for k, v in value.items()}
    if t is frozenset or t is set:
        return [to_go(v) for v in sorted((thaw(k) for k in value), key=sort_key)]
    return value


def _key_text(key: Any) -> str:
    if type(key) is str:
        return key  # type: ignore[no-any-return]
    from pyrego.runtime.convert import dumps

    return dumps(thaw(key))


def go_type(v: Any) -> str:
    t = type(v)
    if t is Number:
        return "json.Number"
    if t is str:
        return "string"
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float64"
    if t is dict:
        return "map[string]interface {}"
    if t is list:
        return "[]interface {}"
    return "interface {}"


def go_print(v: Any, top: bool = True) -> str:
    """``fmt.Sprint`` of one value (``%v``)."""
    if v is NO_VALUE:
        return "<no value>"
    if v is None:
        return "<no value>" if top else "<nil>"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is str or t is Number:
        return str(v)
    if t is int:
        return str(v)
    if t is float:
        return go_sprintf_args("%v", [("float64", v)])
    if t is dict:
        return "map[" + " ".join(f"{k}:{go_print(v[k], False)}" for k in sorted(v)) + "]"
    if t is list:
        return "[" + " ".join(go_print(x, False) for x in v) + "]"
    return str(v)


def truth(v: Any) -> bool:
    if v is None or v is NO_VALUE:
        return False
    t = type(v)
    if t is bool:
        return v  # type: ignore[no-any-return]
    if t is int or t is float:
        return v != 0
    if t is str or t is Number or t is list or t is dict:
        return len(v) > 0
    return True



# ---------------------------------------------------------------- errors


class ExecError(Exception):
    """An execution error; ``node`` is (source offset, node text) once known."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.node: tuple[int, str] | None = None


def at(exc: ExecError, pos: int, text: str) -> ExecError:
    if exc.node is None:
        exc.node = (pos, text)
    return exc



# ---------------------------------------------------------------- functions


def _basic_kind(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float"
    if t is str or t is Number:
        return "string"
    if v is None or v is NO_VALUE:
        return "nil"
    return "other"


def _incompatible(a: Any, b: Any) -> ExecError:
    return ExecError(f"incompatible types for comparison: {go_type(a)} and {go_type(b)}")


def _eq(a: Any, *others: Any) -> bool:
    if not others:
        raise ExecError("missing argument for comparison")
    ka = _basic_kind(a)
    for b in others:
        kb = _basic_kind(b)
        if ka == "other" or kb == "other":
            if a is b or (type(a) is type(b) and a == b):
                return True
            raise _incompatible(a, b)
        if ka != kb:
            if ka == "nil" or kb == "nil":
                continue
            raise _incompatible(a, b)
        if str(a) == str(b) if ka == "string" else a == b:
            return True
    return False


def _lt(a: Any, b: Any) -> bool:
    ka, kb = _basic_kind(a), _basic_kind(b)
    if ka not in ("int", "float", "string") or kb not in ("int", "float", "string"):
        raise ExecError("invalid type for comparison")
    if ka != kb:
        raise _incompatible(a, b)
    return str(a) < str(b) if ka == "string" else a < b  # type: ignore[no-any-return]


def _len(v: Any) -> int:
    t = type(v)
    if t is str or t is Number:
        return len(v.encode("utf-8"))
    if t is list or t is dict:
        return len(v)
    raise ExecError(f"len of type {go_type(v)}")


def _index(item: Any, *indexes: Any) -> Any:
    for ix in indexes:
        if item is None or item is NO_VALUE:
            raise ExecError("index of untyped nil")
        t = type(item)
        if t is list or t is str or t is Number:
            if type(ix) is not int:
                raise ExecError(f"cannot index slice/array with type {go_type(ix)}")
            seq = item if t is list else item.encode("utf-8")
            if not 0 <= ix < len(seq):
                raise ExecError(f"index out of range: {ix}")
            item = seq[ix]
        elif t is dict:
            if type(ix) is not str:
                raise ExecError(f"value has type {go_type(ix)}; should be string")
            item = item.get(ix, None)
        else:
            raise ExecError(f"can't index item of type {go_type(item)}")
    return item


def _slice(item: Any, *indexes: Any) -> Any:
    t = type(item)
    if t not in (list, str, Number):
        raise ExecError(f"can't slice item of type {go_type(item)}")
    if len(indexes) > 2:
        raise ExecError("too many slice indexes")
    for ix in indexes:
        if type(ix) is not int:
            raise ExecError(f"cannot index slice/array with type {go_type(ix)}")
    seq = item if t is list else item.encode("utf-8")
    lo = indexes[0] if indexes else 0
    hi = indexes[1] if len(indexes) > 1 else len(seq)
    if not 0 <= lo <= hi <= len(seq):
        raise ExecError(f"index out of range: {hi}")
    part = seq[lo:hi]
    return part if t is list else part.decode("utf-8", "surrogateescape")


def _sprint(*args: Any) -> str:
    out = []
    prev_string = False
    for i, a in enumerate(args):
        is_string = type(a) is str or type(a) is Number
        if i > 0 and not is_string and not prev_string:
            out.append(" ")
        out.append(go_print(a, False) if a is not None else "<nil>")
        prev_string = is_string
    return "".join(out)


def _sprintln(*args: Any) -> str:
    return " ".join(go_print(a, False) if a is not None else "<nil>" for a in args) + "\n"


def _go_arg(v: Any) -> tuple[str, Any]:
    t = type(v)
    if t is Number:
        return ("json.Number", str(v))
    if t is str:
        return ("string", v)
    if t is bool:
        return ("bool", v)
    if t is int:
        return ("int", v)
    if t is float:
        return ("float64", v)
    if v is None or v is NO_VALUE:
        return ("nil", None)
    return (go_type(v), go_print(v, False))


def _printf(fmt: Any, *args: Any) -> str:
    if type(fmt) is not str:
        raise ExecError(f"wrong type for value; expected string; got {go_type(fmt)}")
    return go_sprintf_args(fmt, [_go_arg(a) for a in args])


def _text_arg(args: tuple[Any, ...]) -> str:
    if len(args) == 1 and (type(args[0]) is str or type(args[0]) is Number):
        return str(args[0])
    return _sprint(*args)


_JS_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E", "&": "\\u0026", "=": "\\u003D"}


def _js(*args: Any) -> str:
    out = []
    for c in _text_arg(args):
        if c in _JS_ESCAPES:
            out.append(_JS_ESCAPES[c])
        elif ord(c) < 0x20 or not c.isprintable():
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def _html_escape(*args: Any) -> str:
    text = _text_arg(args)
    return _html.escape(text, quote=True).replace("&#x27;", "&#39;").replace("&quot;", "&#34;").replace("\0", "\ufffd")


def _urlquery(*args: Any) -> str:
    return urllib.parse.quote_plus(_text_arg(args), safe="-_.~")


def _not(v: Any) -> bool:
    return not truth(v)


# (fewest, most) arguments of each function; most None when variadic.
ARITY: dict[str, tuple[int, int | None]] = {
    "not": (1, 1),
    "len": (1, 1),
    "index": (1, None),
    "slice": (1, None),
    "eq": (1, None),
    "ne": (2, 2),
    "lt": (2, 2),
    "le": (2, 2),
    "gt": (2, 2),
    "ge": (2, 2),
    "printf": (1, None),
}

FUNCS: dict[str, Callable[..., Any]] = {
    "and": lambda *a: None,  # handled lazily in _call
    "or": lambda *a: None,
    "not": _not,
    "len": _len,
    "index": _index,
    "slice": _slice,
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "lt": _lt,
    "le": lambda a, b: _lt(a, b) or _eq(a, b),
    "gt": lambda a, b: not (_lt(a, b) or _eq(a, b)),
    "ge": lambda a, b: not _lt(a, b),
    "print": _sprint,
    "printf": _printf,
    "println": _sprintln,
    "html": _html_escape,
    "js": _js,
    "urlquery": _urlquery,
}


