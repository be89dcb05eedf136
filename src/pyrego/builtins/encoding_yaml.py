"""yaml.marshal / yaml.unmarshal / yaml.is_valid as OPA does them.

OPA goes through ``sigs.k8s.io/yaml``, which is go-yaml v2 (YAML 1.1 style
scalars: ``yes``/``on``/``y`` are booleans, ``017`` is octal, timestamps stay
strings) plus a conversion to JSON (map keys become strings). PyYAML parses
the text (libyaml when available, whose error texts go-yaml shares); scalar
resolution and the JSON conversion follow go-yaml here, not PyYAML.

Documents whose aliases expand too much fail as in Go (see
:mod:`pyrego.yaml_safe`); decoding counts its nodes against the evaluation's
deadline; integers that do not fit 64 bits are read as Go reads them (a
float64, else a string), never parsed in full.
"""

from __future__ import annotations

import base64
import math
import re
import unicodedata
from decimal import Decimal
from functools import cmp_to_key
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pyrego.builtins._goutil import check_json_number, format_float_g, from_bytes, go_quote, int_to_decimal, valid_utf8
from pyrego.builtins.limits import Deadline
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.budget import tick
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import to_json_value
from pyrego.runtime.numbers import format_number
from pyrego.yaml_safe import AliasingError, check_aliasing

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BINARY = "tag:yaml.org,2002:binary"
_PLAIN = "!pyrego-plain"

_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_SPECIAL_FLOATS = {
    ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan,
    ".inf": math.inf, ".Inf": math.inf, ".INF": math.inf,
    "+.inf": math.inf, "+.Inf": math.inf, "+.INF": math.inf,
    "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
}  # fmt: skip
_FLOAT_RX = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BASE60_RX = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_GO_INT_RX = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_TS_RX = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:[Tt]| )(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?)?"
)
_INT64 = 1 << 63
_UINT64 = 1 << 64
_MAX_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}


def _go_parse_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)`` then ``ParseUint``: None when neither fits."""
    if not _GO_INT_RX.fullmatch(text):
        return None
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    if len(body) > 1 and body[0] == "0":
        kind = body[1].lower()
        base = {"x": 16, "o": 8, "b": 2}.get(kind, 8)
        digits = body[2:] if kind in "xob" else body[1:]
    else:
        base, digits = 10, body
    digits = digits.lstrip("0")
    if len(digits) > _MAX_DIGITS[base]:
        return None  # too large for 64 bits (and too long for int() to read)
    v = sign * int(digits or "0", base)
    if -_INT64 <= v < _INT64:
        return v
    if 0 <= v < _UINT64 and text[0] != "+":
        return v
    return None


def _resolve_plain(text: str) -> Any:
    """go-yaml v2's ``resolve`` for an untagged plain scalar (returns the value;
    timestamps stay strings, as go-yaml leaves them in interface{} values)."""
    return _resolve(text)[1]


def _plain_is_string(text: str) -> bool:
    """Whether ``text`` written plain would read back as the same string."""
    return _resolve(text)[0] and not (":" in text and _BASE60_RX.fullmatch(text))


def _resolve(text: str) -> tuple[bool, Any]:
    """(is a string, value) for a plain scalar."""
    hint = text[:1]
    if text in _NULLS:
        return False, None
    if text in _TRUE:
        return False, True
    if text in _FALSE:
        return False, False
    if text in _SPECIAL_FLOATS:
        return False, _SPECIAL_FLOATS[text]
    if hint == ".":
        try:
            if _FLOAT_RX.fullmatch(text):
                return False, float(text)
        except OverflowError:
            pass
        return True, text
    if hint.isdigit() and hint.isascii() or hint in ("+", "-"):
        if _TS_RX.fullmatch(text) and _is_timestamp(text):
            return False, text  # a timestamp: a string when read, quoted when written
        plain = text.replace("_", "")
        iv = _go_parse_int(plain)
        if iv is not None:
            return False, iv
        if _FLOAT_RX.fullmatch(plain):
            f = float(plain)
            if not math.isinf(f):
                return False, f
        if plain.startswith(("0b", "-0b")) and len(plain) <= 67:
            try:
                v = int(plain.replace("0b", ""), 2)
                if -_INT64 <= v < _UINT64:
                    return False, v
            except ValueError:
                pass
    return True, text


def _is_timestamp(text: str) -> bool:
    m = _TS_RX.fullmatch(text)
    if not m:
        return False
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    import calendar

    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1]):
        return False
    if m.group(4) is not None:
        h, mi, s = int(m.group(4)), int(m.group(5)), int(m.group(6))
        if h > 23 or mi > 59 or s > 59:
            return False
        if m.group(7) is None and "T" in text.upper()[10:11] and text[10] in "Tt":
            return False  # RFC 3339 with a T needs a zone
    return True


class _GoLoader(_Loader):  # type: ignore[misc, valid-type]
    """PyYAML's parser and composer, with scalar typing left to :func:`_convert`."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                return _PLAIN
            return _STR
        if kind is SequenceNode:
            return "tag:yaml.org,2002:seq"
        return "tag:yaml.org,2002:map"


class _YamlError(Exception):
    pass


def _scalar(node: ScalarNode) -> Any:
    tag = node.tag
    text = node.value
    if tag == _PLAIN:
        return _resolve_plain(text)
    if tag == _STR or tag == _TIMESTAMP or not tag.startswith("tag:yaml.org,2002:"):
        return text
    if tag == _BINARY:
        try:
            return from_bytes(base64.b64decode("".join(text.split())))
        except ValueError as e:
            raise _YamlError(f"!!binary value contains invalid base64 data: {e}") from None
    v = _resolve_plain(text)
    if tag == _INT and type(v) is int:
        return v
    if tag == _FLOAT and type(v) in (int, float):
        return float(v) if type(v) is int and abs(v) > 2**53 else v
    if tag == _BOOL and type(v) is bool:
        return v
    if tag == _NULL and v is None:
        return None
    if tag == _MERGE:
        return text
    raise _YamlError(f"cannot decode !!str `{text}` as a {tag.replace('tag:yaml.org,2002:', '!!')}")


def _convert(node: Node, depth: int = 0, deadline: Deadline | None = None) -> Any:
    if depth > 10000:
        raise _YamlError("exceeded max depth of 10000")
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if deadline is not None:
        deadline.tick(len(node.value) + 1)
    if isinstance(node, SequenceNode):
        return [_convert(n, depth + 1, deadline) for n in node.value]
    assert isinstance(node, MappingNode)
    out: dict[Any, Any] = {}
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.tag in (_PLAIN, _MERGE) and k.value == "<<":
            _merge(out, v, depth)
            continue
        if not isinstance(k, ScalarNode):
            raise _YamlError(f"invalid map key: {_go_repr(_convert(k, depth + 1))}")
        out[_key(_scalar(k), v, depth)] = _convert(v, depth + 1, deadline)
    return out


def _merge(out: dict[Any, Any], node: Node, depth: int) -> None:
    if isinstance(node, MappingNode):
        for k, v in _convert(node, depth + 1).items():
            out[k] = v
    elif isinstance(node, SequenceNode):
        # earlier maps win: apply them last
        for item in reversed(node.value):
            if not isinstance(item, MappingNode):
                raise _YamlError("map merge requires map or sequence of maps as the value")
            _merge(out, item, depth)
    else:
        raise _YamlError("map merge requires map or sequence of maps as the value")


def _key(k: Any, vnode: Node, depth: int) -> str:
    """sigs.k8s.io/yaml's conversion of a map key to a JSON object key."""
    t = type(k)
    if t is str:
        return k
    if t is bool:
        return "true" if k else "false"
    if t is int:
        if k >= _INT64:
            raise _YamlError(
                f"unsupported map key of type: uint64, key: {hex(k)}, value: {_go_repr(_convert(vnode, depth + 1))}"
            )
        return str(k)
    if t is float:
        text = format_float_g(k, 32)
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text)
    raise _YamlError(
        f"unsupported map key of type: %!s(<nil>), key: <nil>, value: {_go_repr(_convert(vnode, depth + 1))}"
    )


def _go_repr(v: Any) -> str:
    # Go's %#v for the few shapes an error can show.
    if type(v) is str:
        return go_quote(v)
    if v is None:
        return "interface {}(nil)"
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is list:
        return "[]interface {}{" + ", ".join(_go_repr(x) for x in v) + "}"
    if type(v) is dict:
        return "map[string]interface {}{" + ", ".join(f"{go_quote(k)}:{_go_repr(x)}" for k, x in v.items()) + "}"
    return str(v)


def _check_json(v: Any) -> Any:
    """The JSON conversion rejects NaN and infinities; numbers stay as they are."""
    t = type(v)
    if t is float:
        if math.isnan(v):
            raise _YamlError("json: unsupported value: NaN")
        if math.isinf(v):
            raise _YamlError("json: unsupported value: " + ("+Inf" if v > 0 else "-Inf"))
        # A float64 becomes JSON text with its shortest digits (9.223372036854776e18
        # prints as 9223372036854776000): keep that number, not the binary value.
        return int(Decimal(repr(v))) if v.is_integer() and abs(v) < 1e21 else v
    if t is list:
        return [_check_json(x) for x in v]
    if t is dict:
        return {k: _check_json(x) for k, x in v.items()}
    return v


def _yaml_error(e: yaml.YAMLError) -> str:
    """go-yaml's message: ``yaml: line N: problem`` (libyaml's problem text)."""
    problem = getattr(e, "problem", None) or "unknown problem parsing YAML content"
    line = 0
    pm = getattr(e, "problem_mark", None)
    cm = getattr(e, "context_mark", None)
    if pm is not None and pm.line != 0:
        line = pm.line + (1 if isinstance(e, yaml.scanner.ScannerError) else 0)
    elif cm is not None and cm.line != 0:
        line = cm.line
    where = f"line {line}: " if line else ""
    return f"yaml: {where}{problem}"


def _documents(text: str, first_only: bool, deadline: Deadline) -> list[Any]:
    loader = _GoLoader(text)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            check_aliasing(node, text, deadline.tick)
            docs.append(None if node is None else _check_json(_convert(node, 0, deadline)))
            if first_only:
                break
        if not docs:
            docs.append(None)
    finally:
        loader.dispose()
    return docs


@builtin("yaml.unmarshal", 1, cancellable=True)
def yaml_unmarshal(ctx: EvalContext, x: Any) -> Any:
    if type(x) is not str:
        raise operand_error(1, x, "string")
    try:
        return _documents(valid_utf8(x), True, Deadline(ctx))[0]
    except AliasingError as e:
        raise BuiltinError(f"yaml: {e}") from None
    except yaml.YAMLError as e:
        raise BuiltinError(_yaml_error(e)) from None
    except (_YamlError, RecursionError) as e:
        raise BuiltinError(f"yaml: {e}" if not str(e).startswith(("json:", "unsupported")) else str(e)) from None


@builtin("yaml.is_valid", 1, cancellable=True)
def yaml_is_valid(ctx: EvalContext, x: Any) -> bool:
    if type(x) is not str:
        return False
    # Every document must parse (newer OPA: content after the first one counts too).
    try:
        _documents(valid_utf8(x), False, Deadline(ctx))
    except (yaml.YAMLError, _YamlError, RecursionError):
        return False
    return True


# ---------------------------------------------------------------- marshal


def _go_key_less(a: str, b: str) -> int:
    """go-yaml v2's map key order: runs of digits compare as numbers, letters
    after other characters."""
    ar, br = a, b
    for i in range(min(len(ar), len(br))):
        ca, cb = ar[i], br[i]
        if ca == cb:
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return -1 if ca < cb else 1
        if al or bl:
            return -1 if bl else 1
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and unicodedata.category(ar[j]) == "Nd":
                if ar[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        # Go adds rune-'0' (not the digit's value: U+0663 counts 1587) in int64, wrapping
        ai = i
        while ai < len(ar) and unicodedata.category(ar[ai]) == "Nd":
            an = _int64(an * 10 + ord(ar[ai]) - 48)
            ai += 1
        bi = i
        while bi < len(br) and unicodedata.category(br[bi]) == "Nd":
            bn = _int64(bn * 10 + ord(br[bi]) - 48)
            bi += 1
        if an != bn:
            return -1 if an < bn else 1
        if ai != bi:
            return -1 if ai < bi else 1
        return -1 if ca < cb else 1
    return -1 if len(ar) < len(br) else (1 if len(ar) > len(br) else 0)


def _int64(n: int) -> int:
    n &= 0xFFFFFFFFFFFFFFFF
    return n - (1 << 64) if n >> 63 else n


_key_order = cmp_to_key(_go_key_less)


class _GoDumper(_Dumper):  # type: ignore[misc, valid-type]
    def emit(self, event: Any) -> None:
        tick()  # a value with shared parts is written out in full: keep to the deadline
        super().emit(event)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                is_str, v = _resolve(value)
                if is_str:
                    return _STR
                t = type(v)
                if v is None:
                    return _NULL
                if t is bool:
                    return _BOOL
                if t is int:
                    return _INT
                if t is float:
                    return _FLOAT
            return _STR
        return "tag:yaml.org,2002:seq" if kind is SequenceNode else "tag:yaml.org,2002:map"


def _node(v: Any) -> Node:
    t = type(v)
    if t is str:
        if "\n" in v:
            style: str | None = "|"
        elif not _plain_is_string(v):
            style = '"'  # would read back as another type: quote it
        else:
            style = None
        return ScalarNode(_STR, v, style=style)
    if v is None:
        return ScalarNode(_NULL, "null")
    if t is bool:
        return ScalarNode(_BOOL, "true" if v else "false")
    if t is float or t is Decimal:
        # OPA's YAML reads the number's JSON text: an integer text is an int,
        # any other text (2.5, 4.8525594709239458522e+17) a float64.
        check_json_number(v)
        text = format_number(v)
        if "." in text or "e" in text:
            g = format_float_g(float(v))
            if g.endswith("Inf"):
                # Past float64 (1e999999999): Go's YAML reads the text as a string.
                return ScalarNode(_STR, text)
            # Go writes 0 for 1e-400: plain YAML that reads back as that number.
            return ScalarNode(_INT if g.lstrip("-").isdigit() else _FLOAT, g)
        if len(text.lstrip("-")) > 1000:
            # Past float64 (and past Python's int-from-text limit): Go's YAML
            # reads the JSON digits as a string, all of them.
            return ScalarNode(_STR, text)
        v, t = int(text), int
    if t is int:
        if -_INT64 <= v < _UINT64:
            return ScalarNode(_INT, str(v))
        if v.bit_length() <= 1024:
            return ScalarNode(_FLOAT, format_float_g(float(v)))
        # Beyond float64, Go's YAML reads the JSON digits as a string: all of them.
        return ScalarNode(_STR, int_to_decimal(v))
    tick(len(v) + 1)
    if t is list:
        return SequenceNode("tag:yaml.org,2002:seq", [_node(x) for x in v], flow_style=False if v else True)
    pairs = [(_node(k), _node(v[k])) for k in sorted(v, key=_key_order)]
    return MappingNode("tag:yaml.org,2002:map", pairs, flow_style=False if v else True)


@builtin("yaml.marshal", 1)
def yaml_marshal(x: Any) -> str:
    node = _node(_to_plain(to_json_value(x)))
    text: str = yaml.serialize(node, Dumper=_GoDumper, allow_unicode=True, width=80, indent=2)
    if text.endswith("\n...\n"):
        text = text[:-4]
    return text


def _to_plain(v: Any) -> Any:
    t = type(v)
    if t is str:
        return valid_utf8(v)
    if t is list:
        tick(len(v) + 1)
        return [_to_plain(x) for x in v]
    if t is dict:
        tick(len(v) + 1)
        return {valid_utf8(k): _to_plain(x) for k, x in v.items()}
    return v
