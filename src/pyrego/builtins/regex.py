"""Regular expression builtins (OPA's ``regex.go``), on RE2.

OPA uses Go's ``regexp`` (RE2 syntax, linear time). google-re2 gives the same
engine; matching runs on the UTF-8 bytes, as in Go, so offsets and the
"empty match right after a match" rules are Go's. Compile errors carry Go's
texts (``error parsing regexp: missing closing ]: `[a```).

Each match is one RE2 call, so the builtins that loop over matches
(``regex.find_n``, ``regex.find_all_string_submatch_n``, ``regex.split``,
``regex.replace``) and ``regex.globs_match`` stop at the evaluation's deadline.
"""

from __future__ import annotations

import re
from typing import Any

from re2 import _re2  # type: ignore[import-untyped]

from pyrego.builtins._goutil import from_bytes, to_bytes, valid_utf8
from pyrego.builtins.limits import MAX_STRING, TICK, Deadline, check, check_string_size
from pyrego.builtins.regex_glob import globs_match
from pyrego.builtins.registry import builtin, operand_error
from pyrego.builtins.types import int_operand
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.context import EvalContext

_OPTIONS = _re2.RE2.Options()
_OPTIONS.log_errors = False
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED

# RE2's error texts, as Go's regexp/syntax words them.
_ERROR_TEXT = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
}

_CACHE_MAX = 256

#: The largest compiled program (RE2 instructions) pyrego runs. A search's cost
#: in RE2 can grow with the square of the program size (about 0.6 s at this
#: size for ``(a|b|c)*`` repeated 5,000 times) inside one uninterruptible call,
#: so bigger patterns are refused as Go refuses patterns past its own, larger,
#: limit. A 3,000-word alternation is about 12,000 instructions.
MAX_PROGRAM_SIZE = 25_000
_cache: dict[str, Any] = {}

# \C (any byte) is RE2-only; Go rejects it.
_BACKSLASH_C = re.compile(r"(?<!\\)(?:\\\\)*\\C")


class _Regexp:
    """A compiled pattern and its group names."""

    __slots__ = ("re", "names", "ngroups")

    def __init__(self, compiled: Any) -> None:
        self.re = compiled
        self.ngroups: int = compiled.NumberOfCapturingGroups()
        self.names: dict[str, int] = {from_bytes(k): v for k, v in compiled.NamedCapturingGroups()}


def _go_error(message: str) -> str:
    code, _, arg = message.partition(": ")
    if code == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    if code.startswith("pattern too large"):
        return "error parsing regexp: expression too large"
    return f"error parsing regexp: {_ERROR_TEXT.get(code, code)}: `{arg}`"


def compile_regex(pattern: str) -> _Regexp:
    """Compile (cached, bounded) or raise :class:`BuiltinError` with Go's message."""
    r = _cache.get(pattern)
    if r is not None:
        return r
    if "\\C" in pattern and _BACKSLASH_C.search(pattern):
        raise BuiltinError("error parsing regexp: invalid escape sequence: `\\C`")
    compiled = _re2.RE2(to_bytes(pattern), _OPTIONS)
    if not compiled.ok():
        raise BuiltinError(
            _go_error(
                compiled.error().decode("utf-8", "replace") if isinstance(compiled.error(), bytes) else compiled.error()
            )
        )
    if compiled.ProgramSize() > MAX_PROGRAM_SIZE:
        raise BuiltinError("error parsing regexp: expression too large")
    r = _Regexp(compiled)
    if len(_cache) >= _CACHE_MAX:
        # Drop the oldest entry (dicts keep insertion order); another thread
        # may be dropping it at the same moment.
        try:
            del _cache[next(iter(_cache))]
        except (KeyError, RuntimeError, StopIteration):
            pass
    _cache[pattern] = r
    return r


def _string(x: Any, pos: int) -> str:
    if type(x) is not str:
        raise operand_error(pos, x, "string")
    return x


def _int(x: Any, pos: int) -> int:
    # OPA's IntOperand: an integer that fits 64 bits (a larger one is "floating-point").
    return int_operand(x, pos)


def _rune_width(b: bytes, pos: int) -> int:
    """Width of the UTF-8 sequence at ``pos`` (1 for an invalid byte), as Go steps."""
    c = b[pos]
    if c < 0x80:
        return 1
    for width in (2, 3, 4):
        try:
            b[pos : pos + width].decode("utf-8")
            return width
        except UnicodeDecodeError:
            continue
    return 1


def find_all(r: _Regexp, b: bytes, n: int, ctx: EvalContext | None = None) -> list[list[tuple[int, int]]]:
    """Go's ``allMatches``: up to ``n`` (all when negative) matches as span lists;
    an empty match right after the previous match is skipped."""
    if n < 0:
        n = len(b) + 1
    out: list[list[tuple[int, int]]] = []
    pos = 0
    end = len(b)
    prev_end = -1
    match = r.re.Match
    while len(out) < n and pos <= end:
        spans = match(_UNANCHORED, b, pos, end)
        start, stop = spans[0]
        if start < 0:
            break
        if ctx is not None and not len(out) % TICK:
            check(ctx)
        accept = True
        if stop == pos:
            if start == prev_end:
                accept = False
            pos += _rune_width(b, pos) if pos < end else 1
        else:
            pos = stop
        prev_end = stop
        if accept:
            out.append(spans)
    return out


@builtin("regex.match", 2)
def regex_match(pattern: Any, value: Any) -> bool:
    if type(pattern) is not str:
        raise operand_error(1, pattern, "string")
    if type(value) is not str:
        raise operand_error(2, value, "string")
    r = _cache.get(pattern) or compile_regex(pattern)
    # Go's regexp reads a byte that is not UTF-8 as U+FFFD.
    b = value.encode("utf-8") if value.isascii() else to_bytes(valid_utf8(value))
    return r.re.Match(_UNANCHORED, b, 0, len(b))[0][0] >= 0  # type: ignore[no-any-return]


@builtin("re_match", 2)
def re_match(pattern: Any, value: Any) -> bool:
    return regex_match(pattern, value)


@builtin("regex.is_valid", 1)
def regex_is_valid(pattern: Any) -> bool:
    if type(pattern) is not str:
        return False
    try:
        compile_regex(pattern)
    except BuiltinError as e:
        # Go's check only parses: a pattern too large to compile is still valid syntax.
        return "expression too large" in str(e)
    return True


@builtin("regex.split", 2, cancellable=True)
def regex_split(ctx: EvalContext, pattern: Any, value: Any) -> list[str]:
    p = _string(pattern, 1)
    b = to_bytes(_string(value, 2))  # (both operands are checked before the pattern compiles)
    r = compile_regex(p)
    if not b:
        return [] if not pattern else [""]
    parts: list[str] = []
    beg = 0
    end = 0
    for spans in find_all(r, b, -1, ctx):
        end = spans[0][0]
        if spans[0][1] != 0:
            parts.append(from_bytes(b[beg:end]))
        beg = spans[0][1]
    if end != len(b):
        parts.append(from_bytes(b[beg:]))
    return parts


@builtin("regex.find_n", 3, cancellable=True)
def regex_find_n(ctx: EvalContext, pattern: Any, value: Any, number: Any) -> list[str]:
    p = _string(pattern, 1)
    b = to_bytes(_string(value, 2))
    n = _int(number, 3)
    r = compile_regex(p)
    return [from_bytes(b[s[0][0] : s[0][1]]) for s in find_all(r, b, n, ctx)]


@builtin("regex.find_all_string_submatch_n", 3, cancellable=True)
def regex_find_all_string_submatch_n(ctx: EvalContext, pattern: Any, value: Any, number: Any) -> list[list[str]]:
    p = _string(pattern, 1)
    b = to_bytes(_string(value, 2))
    n = _int(number, 3)
    r = compile_regex(p)
    matches = find_all(r, b, n, ctx)
    return [[from_bytes(b[x:y]) if x >= 0 else "" for x, y in spans] for spans in matches]


def _expand(template: bytes, r: _Regexp, src: bytes, spans: list[tuple[int, int]]) -> bytes:
    """Go's ``Regexp.Expand``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``."""
    out = bytearray()
    t = template
    while t:
        i = t.find(b"$")
        if i < 0:
            break
        out += t[:i]
        t = t[i + 1 :]
        if t[:1] == b"$":
            out += b"$"
            t = t[1:]
            continue
        name, num, rest = _extract(t)
        if name is None:
            out += b"$"  # malformed: a literal dollar
            continue
        t = rest
        idx = num if num >= 0 else r.names.get(from_bytes(name), -1)
        if 0 <= idx < len(spans) and spans[idx][0] >= 0:
            out += src[spans[idx][0] : spans[idx][1]]
    out += t
    return bytes(out)


_NAME_RX = re.compile(r"[^\W]+", re.UNICODE)


def _extract(t: bytes) -> tuple[bytes | None, int, bytes]:
    brace = t[:1] == b"{"
    body = t[1:] if brace else t
    text = from_bytes(body)
    m = _NAME_RX.match(text)
    if not m:
        return None, -1, t
    name = m.group(0)
    # \w in Python includes some marks Go's letter/digit test excludes; close enough
    nb = to_bytes(name)
    rest = body[len(nb) :]
    if brace:
        if rest[:1] != b"}":
            return None, -1, t
        rest = rest[1:]
    num = -1
    if name.isascii() and name.isdigit() and len(name) < 9 and not (name[0] == "0" and len(name) > 1):
        num = int(name)
    return nb, num, rest


@builtin("regex.replace", 3, cancellable=True)
def regex_replace(ctx: EvalContext, base: Any, pattern: Any, value: Any) -> str:
    s = _string(base, 1)
    p = _string(pattern, 2)
    v = _string(value, 3)
    r = compile_regex(p)
    src = to_bytes(s)
    repl = to_bytes(v)
    simple = b"$" not in repl
    out = bytearray()
    last_end = 0
    search = 0
    n = len(src)
    match = r.re.Match
    matches = 0
    while search <= n:
        spans = match(_UNANCHORED, src, search, n)
        a0, a1 = spans[0]
        if a0 < 0:
            break
        matches += 1
        if not matches % TICK:
            check(ctx)
        if len(out) > MAX_STRING:
            check_string_size(len(out), "the result")
        out += src[last_end:a0]
        # no replacement for an empty match right after the previous match
        if a1 > last_end or a0 == 0:
            out += repl if simple else _expand(repl, r, src, spans)
        last_end = a1
        width = _rune_width(src, search) if search < n else 1
        if search + width > a1:
            search += width
        elif search + 1 > a1:
            search += 1
        else:
            search = a1
    out += src[last_end:]
    result = from_bytes(bytes(out))
    return s if result == s else result


_QUOTE_META = re.compile(r"([\\.+*?()|\[\]{}^$])")


def go_quote_meta(s: str) -> str:
    """Go's ``regexp.QuoteMeta``."""
    return _QUOTE_META.sub(r"\\\1", s)


_template_cache: dict[tuple[str, str, str], _Regexp] = {}


def _compile_template(tpl: str, start: str, end: str) -> _Regexp:
    key = (tpl, start, end)
    r = _template_cache.get(key)
    if r is not None:
        return r
    # first-level delimiter positions
    level = 0
    idx = 0
    idxs: list[int] = []
    for i, c in enumerate(tpl):
        if c == start:
            level += 1
            if level == 1:
                idx = i
        elif c == end:
            level -= 1
            if level == 0:
                idxs += [idx, i + 1]
            elif level < 0:
                raise BuiltinError(f"unbalanced braces in {_go_q(tpl)}")
    if level != 0:
        raise BuiltinError(f"unbalanced braces in {_go_q(tpl)}")
    pattern = ["^"]
    last = 0
    for i in range(0, len(idxs), 2):
        raw = tpl[last : idxs[i]]
        last = idxs[i + 1]
        part = tpl[idxs[i] + 1 : last - 1]
        pattern.append(f"{go_quote_meta(raw)}({part})")
        compile_regex(f"^{part}$")
    pattern.append(go_quote_meta(tpl[last:]))
    pattern.append("$")
    r = compile_regex("".join(pattern))
    if len(_template_cache) >= _CACHE_MAX:
        del _template_cache[next(iter(_template_cache))]
    _template_cache[key] = r
    return r


def _go_q(s: str) -> str:
    from pyrego.builtins._goutil import go_quote

    return go_quote(s)


@builtin("regex.template_match", 4)
def regex_template_match(template: Any, value: Any, delim_start: Any, delim_end: Any) -> bool:
    tpl = _string(template, 1)
    s = _string(value, 2)
    start = _string(delim_start, 3)
    end = _string(delim_end, 4)
    # Go measures the delimiters in bytes (and reports the start's length for both)
    if len(to_bytes(start)) != 1:
        raise BuiltinError(f"start delimiter has to be exactly one character long but is {len(to_bytes(start))} long")
    if len(to_bytes(end)) != 1:
        raise BuiltinError(f"end delimiter has to be exactly one character long but is {len(to_bytes(start))} long")
    r = _compile_template(tpl, start, end)
    b = to_bytes(s)
    return r.re.Match(_UNANCHORED, b, 0, len(b))[0][0] >= 0  # type: ignore[no-any-return]


@builtin("regex.globs_match", 2, cancellable=True)
def regex_globs_match(ctx: EvalContext, glob1: Any, glob2: Any) -> bool:
    return globs_match(_string(glob1, 1), _string(glob2, 2), Deadline(ctx))
