"""String builtins.

Positions and lengths count Unicode code points (OPA works on Go runes), so
Python's own indexing fits. Where OPA decodes a string into runes (``indexof``,
``indexof_n``, ``substring``, ``upper``, ``lower``, the cutsets of the
``trim`` builtins), each byte that is not UTF-8 is one U+FFFD, as Go reads it. Case mapping follows Go's per-character mapping
(no context, no expansion: ``upper("ß") == "ß"``). ``trim_space`` trims the
characters Go's ``unicode.IsSpace`` names, which differ a little from
Python's ``str.isspace``.

Strings a builtin builds (``replace``, ``strings.replace_n``, ``concat``) are
refused beyond :data:`~.limits.MAX_STRING` characters; ``indexof_n`` and
``strings.replace_n`` (a callback per match) stop at the evaluation's
deadline.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, AnyStr

from pyrego.builtins._goutil import from_bytes, to_bytes, valid_utf8
from pyrego.builtins.limits import MAX_STRING, TICK, Deadline, check, check_string_size
from pyrego.builtins.registry import builtin
from pyrego.builtins.sprintf import format_value
from pyrego.builtins.types import elem_err, int_operand, obj_operand, operand_msg, str_operand, type_err
from pyrego.runtime.builtin_errors import BuiltinError, BuiltinHalt
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import sorted_values, thaw, type_name

# ---------------------------------------------------------------- search


@builtin("contains", 2)
def contains(s: Any, sub: Any) -> bool:
    if type(s) is not str:
        raise type_err(1, s, "string")
    if type(sub) is not str:
        raise type_err(2, sub, "string")
    return sub in s


@builtin("startswith", 2)
def startswith(s: Any, prefix: Any) -> bool:
    if type(s) is not str:
        raise type_err(1, s, "string")
    if type(prefix) is not str:
        raise type_err(2, prefix, "string")
    return s.startswith(prefix)


@builtin("endswith", 2)
def endswith(s: Any, suffix: Any) -> bool:
    if type(s) is not str:
        raise type_err(1, s, "string")
    if type(suffix) is not str:
        raise type_err(2, suffix, "string")
    return s.endswith(suffix)


@builtin("indexof", 2)
def indexof(s: Any, sub: Any) -> int:
    text = valid_utf8(str_operand(s, 1))
    search = valid_utf8(str_operand(sub, 2))
    if not search:
        raise BuiltinError("empty search character")
    return text.find(search)


@builtin("indexof_n", 2, cancellable=True)
def indexof_n(ctx: EvalContext, s: Any, sub: Any) -> list[int]:
    """Every index where ``sub`` starts, overlapping matches included."""
    text = valid_utf8(str_operand(s, 1))
    search = valid_utf8(str_operand(sub, 2))
    if not search:
        raise BuiltinError("empty search character")
    out = []
    find = text.find
    i = find(search)
    if len(text) <= TICK:
        while i >= 0:
            out.append(i)
            i = find(search, i + 1)
        return out
    while i >= 0:
        out.append(i)
        if not len(out) % TICK:
            check(ctx)
        i = find(search, i + 1)
    return out


@builtin("strings.count", 2)
def strings_count(s: Any, sub: Any) -> int:
    # Non-overlapping; an empty substring counts len + 1, like Go.
    return str_operand(s, 1).count(str_operand(sub, 2))


def _string_list(value: Any, position: int) -> list[str]:
    """A string, or an array/set of strings (StringSliceOperand)."""
    t = type(value)
    if t is str:
        return [value]
    if t is list or t is tuple:
        items = list(value)
    elif t is frozenset or t is set:
        items = [thaw(k) for k in value]
    else:
        raise type_err(position, value, "string", "set", "array")
    if not all(type(v) is str for v in items):
        raise _first_non_string(position, value)
    return items


def _first_non_string(position: int, coll: Any) -> Exception:
    """OPA's element error for the first non-string, in OPA's iteration order."""
    items = sorted_values(coll) if type(coll) in (set, frozenset) else coll
    bad = next(v for v in items if type(v) is not str)
    return elem_err(position, coll, bad, "string")


@builtin("strings.any_prefix_match", 2)
def any_prefix_match(strs: Any, prefixes: Any) -> bool:
    texts = _string_list(strs, 1)
    pres = _string_list(prefixes, 2)
    if not texts or not pres:
        return False
    # str.startswith takes a tuple: one pass per string over all prefixes.
    candidates = tuple(pres)
    return any(t.startswith(candidates) for t in texts)


@builtin("strings.any_suffix_match", 2)
def any_suffix_match(strs: Any, suffixes: Any) -> bool:
    texts = _string_list(strs, 1)
    sufs = _string_list(suffixes, 2)
    if not texts or not sufs:
        return False
    candidates = tuple(sufs)
    return any(t.endswith(candidates) for t in texts)


# ---------------------------------------------------------------- building


@builtin("concat", 2)
def concat(delim: Any, coll: Any) -> str:
    sep = str_operand(delim, 1)
    t = type(coll)
    if t is list or t is tuple:
        items = coll
    elif t is frozenset or t is set:
        items = [thaw(k) for k in coll]
    else:
        raise type_err(2, coll, "set", "array")
    if not all(type(v) is str for v in items):
        raise _first_non_string(2, coll)
    if items is not coll:
        # Sets join in sorted order, as OPA iterates them.
        items.sort()
    if len(sep) > 16 and len(sep) * len(items) > MAX_STRING >> 4:
        # A long separator repeated many times: count before building.
        check_string_size(len(sep) * (len(items) - 1) + sum(map(len, items)), "the result")
    return sep.join(items)


@builtin("substring", 3)
def substring(s: Any, start: Any, length: Any) -> str:
    text = valid_utf8(str_operand(s, 1))
    i = int_operand(start, 2)
    n = int_operand(length, 3)
    if i < 0:
        raise BuiltinError("negative offset")
    if n < 0:
        return text[i:]
    return text[i : i + n]


@builtin("strings.reverse", 1)
def strings_reverse(s: Any) -> str:
    return str_operand(s, 1)[::-1]


# ---------------------------------------------------------------- case

# Python's full case mapping expands a few characters ("ß".upper() == "SS")
# and lowers a final capital sigma by context; Go maps each character alone.
_LOWER_SPECIAL = {"\u0130": "i"}  # İ: Go's simple lowercase


@lru_cache(maxsize=4096)
def _lower_char(c: str) -> str:
    low = c.lower()
    if len(low) == 1:
        return low
    return _LOWER_SPECIAL.get(c, c)


@lru_cache(maxsize=4096)
def _upper_char(c: str) -> str:
    up = c.upper()
    return up if len(up) == 1 else c


@builtin("lower", 1)
def lower(s: Any) -> str:
    text = str_operand(s, 1)
    if text.isascii():
        return text.lower()
    text = valid_utf8(text)
    low = text.lower()
    if len(low) == len(text) and "\u03a3" not in text:
        return low
    return "".join(map(_lower_char, text))


@builtin("upper", 1)
def upper(s: Any) -> str:
    text = str_operand(s, 1)
    if text.isascii():
        return text.upper()
    text = valid_utf8(text)
    up = text.upper()
    if len(up) == len(text):
        return up
    return "".join(map(_upper_char, text))


# ---------------------------------------------------------------- split / replace


@builtin("split", 2)
def split(s: Any, delim: Any) -> list[str]:
    text = str_operand(s, 1)
    sep = str_operand(delim, 2)
    if not sep:
        # Go splits into single characters; "" gives [].
        return list(text)
    return text.split(sep)


@builtin("strings.split_n", 3)
def split_n(s: Any, delim: Any, n: Any) -> list[str]:
    """The first ``n`` parts of ``split(s, delim)``, or the last ``-n`` when n < 0."""
    text = str_operand(s, 1)
    sep = str_operand(delim, 2)
    count = int_operand(n, 3)
    parts = text.split(sep) if sep else list(text)
    if count >= 0:
        return parts[:count]
    return parts[count:]


@builtin("replace", 3)
def replace(s: Any, old: Any, new: Any) -> str:
    text = str_operand(s, 1)
    o = str_operand(old, 2)
    n = str_operand(new, 3)
    if (len(text) + 1) * (len(n) + 1) > MAX_STRING and len(n) > len(o):
        # It might grow past the limit: count the matches (an empty old
        # string matches between every two bytes, as in OPA).
        hits = len(to_bytes(text)) + 1 if not o else text.count(o)
        check_string_size(len(text) + hits * (len(n) - len(o)), "the result")
    if not o and n and not text.isascii():
        # OPA's replacer (Go's strings.NewReplacer) matches an empty string at
        # every byte, so a character of several bytes comes out split into
        # invalid ones: bytes.replace does the same.
        return from_bytes(to_bytes(text).replace(b"", to_bytes(n)))
    return text.replace(o, n)


@builtin("strings.replace_n", 2, cancellable=True)
def replace_n(ctx: EvalContext, patterns: Any, s: Any) -> str:
    """Replace every key of ``patterns`` by its value, in one left-to-right pass.

    At each position the first matching key in sorted order wins (Go's
    ``strings.NewReplacer``); replaced text is not scanned again. A regex
    alternation of the sorted, escaped keys behaves exactly so.
    """
    table = obj_operand(patterns, 1)
    text = str_operand(s, 2)
    if not table:
        return text
    pairs = []
    longest = 0
    for k, v in table.items():
        if type(k) is not str:
            raise operand_msg(1, "non-string key found in pattern object")
        if type(v) is not str:
            raise operand_msg(1, "non-string value found in pattern object")
        pairs.append((k, v))
        if len(v) > longest:
            longest = len(v)
    pairs.sort()
    if len(pairs) == 1:
        return replace(text, pairs[0][0], pairs[0][1])  # type: ignore[no-any-return]
    if pairs[0][0] == "" and not text.isascii():
        # An empty key matches at every byte (Go's replacer): match on bytes.
        return from_bytes(_replace_keys(ctx, [(to_bytes(k), to_bytes(v)) for k, v in pairs], to_bytes(text), longest))
    return _replace_keys(ctx, pairs, text, longest)


def _replace_keys(ctx: EvalContext, pairs: list[tuple[AnyStr, AnyStr]], text: AnyStr, longest: int) -> AnyStr:
    """``text`` with each of the sorted keys replaced by its value, the first
    matching key winning at each position (a regex alternation behaves so)."""
    mapping = dict(pairs)
    pattern = _alternation(tuple(k for k, _ in pairs))
    if len(text) <= TICK and (len(text) + 1) * longest <= MAX_STRING:
        return pattern.sub(lambda m: mapping[m.group(0)], text)
    # One call per match: count the result's size, and the time, as it is built.
    deadline = Deadline(ctx)
    size = len(text)

    def substitute(m: re.Match[AnyStr]) -> AnyStr:
        nonlocal size
        v = mapping[m.group(0)]
        size += len(v) - (m.end() - m.start())
        if size > MAX_STRING:
            check_string_size(size, "the result")
        deadline.tick()
        return v

    return pattern.sub(substitute, text)


@lru_cache(maxsize=256)
def _alternation(keys: tuple[AnyStr, ...]) -> re.Pattern[AnyStr]:
    bar = "|" if isinstance(keys[0], str) else b"|"
    return re.compile(bar.join(re.escape(k) for k in keys))  # type: ignore[arg-type]


# ---------------------------------------------------------------- trim

# Go's unicode.IsSpace.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim(s: Any, cutset: Any, left: bool, right: bool) -> str:
    """Go's ``strings.Trim``: a byte that is not UTF-8 reads as U+FFFD, on
    either side; the kept part keeps its bytes."""
    text = str_operand(s, 1)
    cut = valid_utf8(str_operand(cutset, 2))
    runes = valid_utf8(text)
    if runes is text:
        return text.strip(cut) if left and right else text.lstrip(cut) if left else text.rstrip(cut)
    start = len(runes) - len(runes.lstrip(cut)) if left else 0
    end = len(runes.rstrip(cut)) if right else len(runes)
    return text[start:end] if start < end else ""


@builtin("trim", 2)
def trim(s: Any, cutset: Any) -> str:
    return _trim(s, cutset, True, True)


@builtin("trim_left", 2)
def trim_left(s: Any, cutset: Any) -> str:
    return _trim(s, cutset, True, False)


@builtin("trim_right", 2)
def trim_right(s: Any, cutset: Any) -> str:
    return _trim(s, cutset, False, True)


@builtin("trim_prefix", 2)
def trim_prefix(s: Any, prefix: Any) -> str:
    text = str_operand(s, 1)
    pre = str_operand(prefix, 2)
    return text[len(pre) :] if pre and text.startswith(pre) else text


@builtin("trim_suffix", 2)
def trim_suffix(s: Any, suffix: Any) -> str:
    text = str_operand(s, 1)
    suf = str_operand(suffix, 2)
    return text[: -len(suf)] if suf and text.endswith(suf) else text


@builtin("trim_space", 1)
def trim_space(s: Any) -> str:
    return str_operand(s, 1).strip(_GO_SPACE)


# ---------------------------------------------------------------- template strings


def _template_part(value: Any) -> str:
    """One interpolated value: strings as they are, anything else as Rego text."""
    return value if type(value) is str else format_value(value)  # type: ignore[no-any-return]


@builtin("internal.template_string", 1)
def template_string(parts: Any) -> str:
    """The lowered form of ``$"...{expr}..."``: literal parts and, for each
    expression, the set of its values (empty when undefined)."""
    t = type(parts)
    if t is not list and t is not tuple:
        raise type_err(1, parts, "array")
    out = []
    for part in parts:
        tp = type(part)
        if tp is frozenset or tp is set:
            if not part:
                out.append("<undefined>")
            elif len(part) > 1:
                raise BuiltinHalt("template-strings must not produce multiple outputs", "eval_conflict_error")
            else:
                out.append(_template_part(thaw(next(iter(part)))))
        elif tp is list or tp is tuple or tp is dict:
            raise BuiltinHalt(f"illegal argument type: {type_name(part)}", "eval_internal_error")
        else:
            out.append(_template_part(part))
    return "".join(out)
