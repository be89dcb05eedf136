"""Printing results and errors as ``opa`` prints them (shared by every subcommand)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyrego.errors import RegoError


class UsageError(Exception):
    """A command-line mistake that is not a Rego error (exit status 2)."""


def _dumps(value: Any, indent: int | None = 2) -> str:
    """JSON text as ``opa eval`` prints it.

    Rego values (sets, non-string keys) are rendered as OPA renders them, with
    object keys sorted; the dicts this module builds for the output envelope
    keep their own key order (``value``, ``text``, ``location``, as OPA's).
    """
    return _render(value, indent, 0)


class _Envelope(dict):  # type: ignore[type-arg]
    """A dict of the output envelope: printed in insertion order, values as Rego values."""


def _render(v: Any, indent: int | None, level: int) -> str:
    from pyrego.runtime.convert import to_json_value
    from pyrego.runtime.numbers import format_number

    if isinstance(v, _Envelope):
        items = [(k, _render(x, indent, level + 1)) for k, x in v.items()]
        return _join_items(items, indent, level)
    if isinstance(v, list) and v and all(isinstance(x, _Envelope) for x in v):
        return _join([_render(x, indent, level + 1) for x in v], "[", "]", indent, level)
    try:
        plain = to_json_value(v)
    except Exception:  # noqa: BLE001 - anything unusual is shown as text
        plain = str(v)
    return _render_plain(plain, indent, level, format_number)


def _render_plain(v: Any, indent: int | None, level: int, fmt_num: Any) -> str:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float, Decimal)):
        try:
            return str(fmt_num(v))
        except Exception:  # noqa: BLE001 - NaN/inf cannot occur in Rego values
            return json.dumps(str(v))
    if isinstance(v, list):
        return _join([_render_plain(x, indent, level + 1, fmt_num) for x in v], "[", "]", indent, level)
    if isinstance(v, dict):
        items = [(str(k), _render_plain(x, indent, level + 1, fmt_num)) for k, x in v.items()]
        return _join_items(items, indent, level)
    return json.dumps(str(v), ensure_ascii=False)


def _join_items(items: list[tuple[str, str]], indent: int | None, level: int) -> str:
    colon = ": " if indent is not None else ":"
    return _join([json.dumps(k, ensure_ascii=False) + colon + x for k, x in items], "{", "}", indent, level)


def _join(parts: list[str], open_: str, close: str, indent: int | None, level: int) -> str:
    if not parts:
        return open_ + close
    if indent is None:
        return open_ + ",".join(parts) + close
    pad = " " * (indent * (level + 1))
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * (indent * level) + close


def _clean_results(result: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for row in result.get("result") or []:
        exprs = []
        for e in row.get("expressions", []):
            out_e = _Envelope(value=e.get("value"), text=e.get("text", ""))
            loc = e.get("location")
            if loc is not None:
                out_e["location"] = _Envelope(row=loc.get("row"), col=loc.get("col"))
            exprs.append(out_e)
        out = _Envelope(expressions=exprs)
        if row.get("bindings"):
            out["bindings"] = row["bindings"]
        rows.append(out)
    return _Envelope(result=rows) if rows else _Envelope()


def _raw_text(value: Any) -> str:
    return value if isinstance(value, str) else _dumps(value, indent=None)


def format_result(result: dict[str, Any], fmt: str) -> str:
    """Render an ``eval_query`` result as ``opa eval`` does in format ``fmt``
    (``json``, ``values``, ``bindings``, ``raw``, ``pretty``, ``discard``)."""
    doc = _clean_results(result)
    rows = doc.get("result", [])
    if fmt == "json":
        return _dumps(doc)
    if fmt == "discard":
        return _dumps(_Envelope(result="discarded")) if rows else _dumps(doc)
    if fmt == "values":
        # One JSON array of the expressions' values per result.
        return "\n".join(_dumps([e["value"] for e in row["expressions"]]) for row in rows)
    if fmt == "bindings":
        return "\n".join(_dumps(row.get("bindings", {})) for row in rows)
    if fmt == "raw":
        # Expressions of a result on one line, separated by spaces; strings as they are.
        return "\n".join(" ".join(_raw_text(e["value"]) for e in row["expressions"]) for row in rows)
    return _pretty(rows)


def _pretty(rows: list[Any]) -> str:
    """OPA's pretty output: one value as JSON, else a table of the variables
    (sorted) and the expressions (in order; boolean ones only when nothing is bound)."""
    if not rows:
        return "undefined"
    first = rows[0]
    exprs = first["expressions"]
    if len(rows) == 1 and not first.get("bindings"):
        if len(exprs) == 1 or all(isinstance(e["value"], bool) for e in exprs):
            return _dumps(exprs[0]["value"])
    bound = first.get("bindings", {})
    names = sorted(bound)
    columns: list[tuple[str, Any]] = [(n, ("var", n)) for n in names]
    for i, e in enumerate(exprs):
        if not isinstance(e["value"], bool) or not bound:
            columns.append((e["text"], ("expr", i)))

    def cell(row: Any, key: tuple[str, Any]) -> str:
        kind, k = key
        if kind == "var":
            return _dumps(row.get("bindings", {}).get(k), indent=None)
        return _dumps(row["expressions"][k]["value"], indent=None)

    table = [[cell(row, key) for _, key in columns] for row in rows]
    return ascii_table([h for h, _ in columns], table)


def ascii_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str], center: bool = False) -> str:
        parts = [(c.center(w) if center else c.ljust(w)) for c, w in zip(cells, widths, strict=True)]
        return "| " + " | ".join(parts) + " |"

    return "\n".join([sep, line(header, center=True), sep, *(line(r) for r in rows), sep])


class PlainError(Exception):
    """An error without a Rego code, such as a file that cannot be read
    (OPA prints these with only a message: ``stat x.rego: no such file or directory``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = ""
        self.location = None


def format_errors(errors: Sequence[RegoError | PlainError], fmt: str) -> str:
    """Render errors as ``opa eval`` does: JSON in ``json`` format, text otherwise.

    A lone error that carries others (``errors``: all OPA reports for one
    compilation) stands for all of them; a list of several is taken as it is."""
    errors = _every_error(errors)
    if fmt == "json":
        return _dumps(_Envelope(errors=[_error_dict(e) for e in errors]))
    n = len(errors)
    head = "1 error occurred: " if n == 1 else f"{n} errors occurred:\n"
    return head + "\n".join(str(e) for e in errors)


def _every_error(errors: Sequence[RegoError | PlainError]) -> list[RegoError | PlainError]:
    if len(errors) == 1:
        return list(getattr(errors[0], "errors", None) or errors)
    return list(errors)


def _error_dict(err: RegoError | PlainError) -> dict[str, Any]:
    if isinstance(err, PlainError):
        return _Envelope(message=err.message)
    out = _Envelope(message=err.message, code=err.code)
    if err.location is not None:
        loc = err.location
        out["location"] = _Envelope(file=loc.file, row=loc.row, col=loc.col)
        detail = err.detail()  # a parse error's line and index, as OPA's parser gives them
        if detail is not None:
            out["details"] = _Envelope(line=detail[0], idx=detail[1])
    return out
