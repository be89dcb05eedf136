"""``# METADATA`` comment blocks: YAML annotations attached to packages and rules.

As in OPA, a block starts at a comment whose text begins with ``METADATA`` and
takes every following comment that sits in column 1 of the very next line.
The YAML is parsed with YAML 1.2 scalars (``yes`` stays a string, dates stay
strings), like Go's yaml.v3. The annotation's scope defaults to ``rule``
(``document`` for an entrypoint) before a rule and ``package`` before the
package; OPA's placement checks apply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml

from . import ast
from .errors import Location, RegoParseError

SCOPES = ("rule", "document", "package", "subpackages")


class Statement(NamedTuple):
    """What an annotation can attach to: kind (package/import/rule) and row."""

    kind: str
    row: int


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars (as Go's yaml.v3 reads them)."""


_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag
        not in (
            "tag:yaml.org,2002:bool",
            "tag:yaml.org,2002:int",
            "tag:yaml.org,2002:float",
            "tag:yaml.org,2002:timestamp",
        )
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0x"):
        return int(text[2:], 16)
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 10)


def _construct_bool(loader: yaml.SafeLoader, node: yaml.Node) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


@dataclass
class _Block:
    row: int
    col: int
    lines: list[str]
    rows: list[int]


def _plain(x: Any, depth: int, seen: set[int]) -> Any:
    """A copy of YAML data as plain JSON-like values (string keys); rejects
    self-referencing anchors and absurd nesting."""
    if depth > 200:
        raise ValueError("nesting too deep")
    if isinstance(x, dict):
        if id(x) in seen:
            raise ValueError("recursive structure")
        seen.add(id(x))
        out = {}
        for k, v in x.items():
            if isinstance(k, (dict, list)):
                raise ValueError("invalid map key type(s)")
            key = (
                k
                if isinstance(k, str)
                else ("null" if k is None else str(k).lower() if isinstance(k, bool) else str(k))
            )
            out[key] = _plain(v, depth + 1, seen)
        seen.discard(id(x))
        return out
    if isinstance(x, list):
        if id(x) in seen:
            raise ValueError("recursive structure")
        seen.add(id(x))
        items = [_plain(v, depth + 1, seen) for v in x]
        seen.discard(id(x))
        return items
    if isinstance(x, (str, bool, int, float)) or x is None:
        return x
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    return str(x)


def parse_annotation_blocks(
    comments: list[tuple[int, int, str]], filename: str, source_line: Callable[[int], str | None]
) -> list[ast.Annotation]:
    """Find the METADATA blocks among the comments and parse their YAML.
    The scope is left as written (possibly empty); attach_annotations fills it."""
    blocks: list[_Block] = []
    current: _Block | None = None
    prev_row = -1
    for row, col, text in comments:
        if current is not None:
            if row == prev_row + 1 and col == 1:
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
        try:
            raw = yaml.load(buf, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark
            line = mark.line if mark is not None else 0
            row = b.rows[min(line, len(b.rows) - 1)] if b.rows else b.row
            where = Location(filename, row, 1)
            problem = e.problem or str(e)
            raise RegoParseError(f"yaml: line {line + 1}: {problem}", where, source_line=source_line(row))
        except Exception as e:  # YAML bombs, recursion, ...
            raise RegoParseError(f"yaml: {type(e).__name__}", loc, source_line=source_line(b.row))
        if not isinstance(raw, dict):
            kind = type(raw).__name__
            raise RegoParseError(
                f"yaml: unmarshal errors: cannot unmarshal {kind} into annotations", loc, source_line=source_line(b.row)
            )
        try:
            data = _plain(raw, 0, set())
        except (ValueError, RecursionError) as e:
            raise RegoParseError(f"invalid METADATA block: {e}", loc, source_line=source_line(b.row))
        scope = data.get("scope")
        out.append(ast.Annotation("" if scope is None else str(scope), data, loc))
    return out


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
