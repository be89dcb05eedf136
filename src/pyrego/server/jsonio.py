"""Request and response bodies: orjson, with pyrego's exact reader and writer where a number needs them.

orjson reads numbers as 64-bit integers and doubles; a body with a long run
of digits or a large exponent (an integer past 64 bits, a decimal with more
digits than a double keeps, ``1e400``) is read by pyrego's own JSON reader
instead (:func:`pyrego.runtime.convert.loads`), which keeps such numbers
exact, as OPA does. A response orjson cannot write (an integer past 64 bits,
an exact decimal) is written by :func:`pyrego.go_json.marshal`, which writes
them digit for digit.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from pyrego.errors import DataError

# A run of digits (with a point) longer than a double's 15-17, or a 3-digit exponent:
# the body may hold a number orjson would round, so the exact reader takes it.
_EXACT_NEEDED = re.compile(rb"[0-9.]{16,}|[eE][+-]?[0-9]{3,}")

# The same test at C speed (the regular expression costs ~15 us on a 200-byte body):
# digits and points become "0", "e"/"E" "e", signs "+", the rest " "; the body then
# holds "0" * 16 or "e000" or "e+000" wherever the expression matches (and maybe
# elsewhere, as in a string "e.000": the exact reader is then asked, and it is right too).
_CLASSES = bytes(
    ord("0") if chr(c) in "0123456789." else ord("e") if chr(c) in "eE" else ord("+") if chr(c) in "+-" else ord(" ") for c in range(256)
)


def exact_needed(raw: bytes) -> bool:
    """Whether ``raw`` may hold a number orjson would round (a superset of :data:`_EXACT_NEEDED`'s matches)."""
    t = raw.translate(_CLASSES)
    return b"0000000000000000" in t or b"e000" in t or b"e+000" in t


class BodyError(ValueError):
    """The body is not valid JSON (the message says why)."""


def loads(body: bytes | str) -> Any:
    """Parse a JSON body; raises :class:`BodyError` on malformed JSON."""
    raw = body.encode() if isinstance(body, str) else body
    if not exact_needed(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if b"\\u" not in raw:  # (a lone surrogate escape: pyrego's reader replaces it, as OPA)
                raise BodyError(str(exc)) from None
    from pyrego.runtime.convert import loads as exact_loads

    try:
        return exact_loads(raw)
    except DataError as exc:
        raise BodyError(exc.message.removeprefix("malformed JSON: ")) from None


def dumps(value: Any, *, pretty: bool = False) -> bytes:
    """A response body: ``value`` as JSON with a trailing newline (as Go's encoder writes)."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE if pretty else orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        from pyrego.go_json import marshal

        out = (marshal(value, "  " if pretty else None) + "\n").encode()
    return out
