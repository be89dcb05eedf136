"""``# METADATA`` comment blocks: YAML annotations attached to packages and rules.

As in OPA, a block starts at a comment whose text begins with ``METADATA`` and
takes every following comment that sits in column 1 of the very next line.
The YAML is parsed with YAML 1.2 scalars (``yes`` stays a string, dates stay
strings), like Go's yaml.v3. The annotation's scope defaults to ``rule``
(``document`` for an entrypoint) before a rule and ``package`` before the
package; OPA's placement checks apply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pyrego import yaml_safe
from pyrego.ast import nodes as ast
from pyrego.builtins._goutil import from_bytes, valid_utf8
from pyrego.errors import Location, RegoParseError
from pyrego.go_base64 import Base64Error, go_b64decode


class Statement(NamedTuple):
    """What an annotation can attach to: kind (package/import/rule) and row."""

    kind: str
    row: int


class _Loader(yaml.SafeLoader):
    """PyYAML's parser and composer; scalars are typed by :func:`_scalar`
    (plain ones are marked, quoted ones are strings, explicit tags stay)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


# How OPA reads annotation YAML (go-yaml v3, then values as Rego values), as
# OPA v1.20 answers: YAML 1.2 booleans and nulls, Go's integer syntax
# (0x, 0o, 0b, 017 octal, underscores), uint64 values wrapped to int64,
# timestamps as RFC 3339 text, !!binary decoded, !!set as an object of nulls.

_YAML = "tag:yaml.org,2002:"
_PLAIN = "!pyrego-plain"
_STR, _SEQ, _MAP = _YAML + "str", _YAML + "seq", _YAML + "map"
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_SPECIAL = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_FLOAT_RX = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INT_RX = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]{1,16}|0[oO][0-7]{1,22}|0[bB][01]{1,64}|0[0-7]{0,22}|[1-9][0-9]{0,19})")
_TIME_RX = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:([Tt ])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:[.,]([0-9]+))?(Z|[-+][0-9]{2}:[0-9]{2})?)?"
)


class _DecodeError(Exception):
    """A YAML value OPA's decoder refuses (reported at the block's first line)."""


def _go_int(text: str) -> int | None:
    """Go's ``ParseInt(text, 0, 64)``, then ``ParseUint`` (wrapped into int64, as OPA does)."""
    if not _INT_RX.fullmatch(text):
        return None
    neg = text[0] == "-"
    body = text.lstrip("+-")
    base = 10
    if len(body) > 1 and body[0] == "0":
        kind = body[1].lower()
        base = {"x": 16, "o": 8, "b": 2}.get(kind, 8)
        body = body[2:] if kind in "xob" else body[1:]
    v = int(body or "0", base)
    v = -v if neg else v
    if -(1 << 63) <= v < 1 << 63:
        return v
    if not neg and text[0] != "+" and v < 1 << 64:
        return v - (1 << 64)
    return None


def _timestamp(text: str) -> str | None:
    """A YAML timestamp (Go's formats) as RFC 3339 text, as Go prints a time.Time."""
    from pyrego.builtins.time import RFC3339_NANO
    from pyrego.builtins.time_layout import UTC, FixedZone, days_from_civil, days_in, format_time

    m = _TIME_RX.fullmatch(text)
    if m is None:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= mo <= 12 and 1 <= d <= days_in(mo, y)):
        return None
    sep, zone = m.group(4), m.group(9)
    if sep is None:
        h = mi = sec = nsec = 0
    else:
        if zone is None and sep != " ":
            return None  # with a T, Go's formats need a zone
        h, mi, sec = int(m.group(5)), int(m.group(6)), int(m.group(7))
        if h > 23 or mi > 59 or sec > 59:
            return None
        nsec = int((m.group(8) or "")[:9].ljust(9, "0"))
    offset = 0 if zone in (None, "Z") else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    unix = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset
    return format_time(unix, nsec, FixedZone("", offset) if offset else UTC, RFC3339_NANO)


def _number(f: float) -> Any:
    # A float64 as a Rego number: integral values as ints (-0 is 0).
    if f.is_integer() and abs(f) < 1e21:
        return int(Decimal(repr(f)))
    return f


def _plain(text: str) -> tuple[str, Any]:
    """go-yaml v3's resolution of an untagged plain scalar: (short tag, value)."""
    if text in _NULLS:
        return "!!null", None
    if text in _BOOLS:
        return "!!bool", _BOOLS[text]
    if text in _SPECIAL:
        return "!!float", _SPECIAL[text]
    c = text[0]
    if c.isdigit() or c in "+-.":
        if c.isdigit():
            t = _timestamp(text)
            if t is not None:
                return "!!timestamp", t
        plain = text.replace("_", "")
        v = _go_int(plain)
        if v is not None:
            return "!!int", v
        if _FLOAT_RX.fullmatch(plain):
            f = float(plain)
            if not math.isinf(f):
                return "!!float", _number(f)
    return "!!str", text


def _scalar(node: ScalarNode) -> Any:
    tag, text = node.tag, node.value
    if tag == _PLAIN:
        return _plain(text)[1]
    if tag == _STR or not tag.startswith(_YAML):
        return text  # quoted, !!str, or a tag of the document's own
    short = "!!" + tag[len(_YAML) :]
    if short == "!!binary":
        try:
            return valid_utf8(from_bytes(go_b64decode(text.encode("utf-8"))))
        except Base64Error:
            raise _DecodeError("!!binary value contains invalid base64 data") from None
    if short == "!!timestamp":
        t = _timestamp(text)
        if t is not None:
            return t
        raise _DecodeError(f"cannot decode !!str `{text}` as a !!timestamp")
    resolved, value = _plain(text) if text else ("!!null", None)
    if resolved == "!!timestamp":
        resolved, value = "!!str", text
    if resolved == short or short == "!!null":
        return None if short == "!!null" else value
    if short == "!!float" and resolved == "!!int":
        return value
    if short in ("!!bool", "!!int", "!!float"):
        raise _DecodeError(f"cannot decode {resolved} `{text}` as a {short}")
    return text


class _KeyError(Exception):
    """A mapping key that is not a string (OPA: invalid map key type(s))."""


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first: int) -> None:
        super().__init__(f'line {line}: mapping key "{key}" already defined at line {first}')
        self.line = line


def _key(node: Node) -> str:
    if not isinstance(node, ScalarNode):
        raise _KeyError
    if node.tag == _PLAIN:
        tag, value = _plain(node.value)
        if tag == "!!str" or tag == "!!timestamp":
            return node.value  # a timestamp key keeps its text
        raise _KeyError
    value = _scalar(node)
    if type(value) is not str:
        raise _KeyError
    return value


def _value(node: Node, depth: int = 0) -> Any:
    """The plain value of a composed node (aliases already checked)."""
    if depth > _MAX_DEPTH:
        raise ValueError("nesting too deep")
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        return [_value(n, depth + 1) for n in node.value]
    out: dict[str, Any] = {}
    lines: dict[str, int] = {}
    merges: list[Node] = []
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.tag == _PLAIN and k.value == "<<":
            merges.append(v)
            continue
        key = _key(k)
        line = k.start_mark.line + 1
        if key in lines:
            raise _DuplicateKey(key, line, lines[key])
        lines[key] = line
        out[key] = None if node.tag == _YAML + "set" else _value(v, depth + 1)
    for merge in merges:
        # The mapping's own keys win, then earlier merged maps.
        for item in merge.value if isinstance(merge, SequenceNode) else [merge]:
            if not isinstance(item, MappingNode):
                raise _DecodeError("map merge requires map or sequence of maps as the value")
            for key, value in _value(item, depth + 1).items():
                out.setdefault(key, value)
    return out


_MAX_DEPTH = 200


@dataclass
class _Block:
    row: int
    col: int
    lines: list[str]
    rows: list[int]


def parse_annotation_blocks(
    comments: list[tuple[int, int, str]],
    filename: str,
    source_line: Callable[[int], str | None],
    parse_query: Callable[[str], ast.Body],
) -> list[ast.Annotation]:
    """Find the METADATA blocks among the comments and parse their YAML.
    The scope is left as written (possibly empty); attach_annotations fills it.
    ``parse_query``: the parser's, for the paths a ``schemas`` entry names
    (this module sits below the parser)."""
    blocks: list[_Block] = []
    current: _Block | None = None
    prev_row = -1
    for row, col, text in comments:
        if current is not None:
            # (a METADATA line right below a block starts the next block, as in OPA)
            if row == prev_row + 1 and col == 1 and not text.strip().startswith("METADATA"):
                current.lines.append(text[1:] if text.startswith(" ") else text)
                current.rows.append(row)
                prev_row = row
                continue
            current = None
        if text.strip().startswith("METADATA"):
            current = _Block(row, col, [], [])
            blocks.append(current)
        prev_row = row
    out = []
    for b in blocks:
        loc = Location(filename, b.row, b.col)
        buf = "".join(line + "\n" for line in b.lines)
        if not buf.strip():
            raise RegoParseError("expected METADATA block, found whitespace", loc, source_line=source_line(b.row))
        first_line = b.rows[0] if b.rows else b.row
        try:
            node = yaml_safe.compose(buf, _Loader)
            raw = None if node is None else (_value(node) if isinstance(node, MappingNode) else node)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark
            line = mark.line if mark is not None else 0
            row = b.rows[min(line, len(b.rows) - 1)] if b.rows else b.row
            where = Location(filename, row, 1)
            problem = e.problem or str(e)
            raise RegoParseError(f"yaml: line {line + 1}: {problem}", where, source_line=source_line(row))
        except (yaml_safe.AliasingError, _DecodeError) as e:
            where = Location(filename, first_line, 1)
            raise RegoParseError(f"yaml: {e}", where, source_line=source_line(first_line))
        except _DuplicateKey as e:
            row = b.rows[min(e.line - 1, len(b.rows) - 1)] if b.rows else b.row
            where = Location(filename, row, 1)
            raise RegoParseError(f"yaml: unmarshal errors:\n  {e}", where, source_line=source_line(row))
        except _KeyError:
            raise RegoParseError("invalid map key type(s): ", loc, source_line=source_line(b.row))
        except (ValueError, RecursionError, yaml.YAMLError) as e:
            raise RegoParseError(f"invalid METADATA block: {e}", loc, source_line=source_line(b.row))
        if not isinstance(raw, dict):
            kind = "!!seq" if isinstance(raw, SequenceNode) else "!!str"
            raise RegoParseError(
                f"yaml: unmarshal errors: cannot unmarshal {kind} into annotations", loc, source_line=source_line(b.row)
            )
        data = raw
        if isinstance(node, MappingNode):
            _check_schema_shapes(node, b, filename, source_line)
        if data.get("schemas"):
            _check_schema_entries(data["schemas"], loc, source_line, parse_query)
        scope = data.get("scope")
        out.append(ast.Annotation("" if scope is None else str(scope), data, loc))
    return out


def _node_kind(node: Node) -> str:
    """How go-yaml names a node in an unmarshal error (``!!str `x```, ``!!map``)."""
    if isinstance(node, MappingNode):
        return "!!map"
    if isinstance(node, SequenceNode):
        return "!!seq"
    assert isinstance(node, ScalarNode)
    tag = _plain(node.value)[0] if node.tag == _PLAIN else "!!str"
    return f"{tag} `{node.value}`"


def _check_schema_shapes(node: MappingNode, b: _Block, filename: str, source_line: Callable[[int], str | None]) -> None:
    """``schemas:`` must be a list of maps (OPA decodes it into ``[]map[string]any``)."""
    for k, v in node.value:
        if not (isinstance(k, ScalarNode) and k.value == "schemas"):
            continue
        bad: tuple[Node, str] | None = None
        if isinstance(v, SequenceNode):
            for item in v.value:
                if not isinstance(item, MappingNode) and not (isinstance(item, ScalarNode) and _is_null(item)):
                    bad = (item, "map[string]interface {}")
                    break
        elif not (isinstance(v, ScalarNode) and _is_null(v)):
            bad = (v, "[]map[string]interface {}")
        if bad is not None:
            line = bad[0].start_mark.line + 1
            row = b.rows[min(line - 1, len(b.rows) - 1)] if b.rows else b.row
            raise RegoParseError(
                f"yaml: unmarshal errors:\n  line {line}: cannot unmarshal {_node_kind(bad[0])} into {bad[1]}",
                Location(filename, row, 1),
                source_line=source_line(row),
            )


def _is_null(node: ScalarNode) -> bool:
    return node.tag == _PLAIN and node.value in _NULLS


def _check_schema_entries(
    entries: list[Any], loc: Location, source_line: Callable[[int], str | None], parse_query: Callable[[str], ast.Body]
) -> None:
    """Each ``path: schema`` pair: a path into ``input`` or ``data``, and a
    ``schema.<name>`` reference or an inline definition (OPA's messages)."""

    def fail(message: str) -> RegoParseError:
        return RegoParseError(message, loc, source_line=source_line(loc.row))

    def ref_head(text: str) -> str | None:
        try:
            body = parse_query(text)
        except RegoParseError:
            return None
        stmt = body[0].statement if len(body) == 1 and not body[0].negated and not body[0].with_mods else None
        if isinstance(stmt, ast.Var):
            return stmt.name
        if isinstance(stmt, ast.Ref) and isinstance(stmt.head, ast.Var):
            return stmt.head.name
        return None

    for entry in entries:
        if not isinstance(entry, dict):
            continue
        for path, value in entry.items():
            if ref_head(str(path)) not in ("input", "data"):
                raise fail("invalid document reference")
            if isinstance(value, str):
                if ref_head(value) != "schema":
                    raise fail("invalid schema reference")
            elif not isinstance(value, dict):
                raise fail(f'invalid schema declaration for path "{path}"')


def attach_annotations(
    annotations: list[ast.Annotation], stmts: list[Statement], source_line: Callable[[int], str | None]
) -> tuple[ast.Annotation, ...]:
    """Give each annotation its default scope from the first statement after
    it, and check that the scope fits that statement (OPA's rules)."""
    out = []
    for a in annotations:
        node = next((s for s in stmts if s.row > a.location.row), None)
        scope = a.scope
        entrypoint = a.data.get("entrypoint") is True
        if not scope and node is not None:
            if node.kind == "rule":
                scope = "document" if entrypoint else "rule"
            else:
                scope = node.kind  # "package", or "import" (rejected below)

        def fail(message: str, loc: Location = a.location) -> RegoParseError:
            return RegoParseError(message, loc, source_line=source_line(loc.row))

        have = f" (have {node.kind})" if node is not None else ""
        if scope in ("rule", "document"):
            if node is None or node.kind != "rule":
                raise fail(f"annotation scope '{scope}' must be applied to rule{have}")
        elif scope in ("package", "subpackages"):
            if node is None or node.kind != "package":
                raise fail(f"annotation scope '{scope}' must be applied to package{have}")
        else:
            raise fail(
                f"invalid annotation scope '{scope}'. Use one of 'rule', 'document', 'package', or 'subpackages'"
            )
        if entrypoint and scope not in ("document", "package"):
            raise fail(f"annotation entrypoint applied to non-document or package scope '{scope}'")
        out.append(ast.Annotation(scope, a.data, a.location))
    return tuple(out)
