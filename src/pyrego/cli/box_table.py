"""Tables as OPA's commands draw them (``opa inspect``, ``opa deps``).

OPA renders its tables with tablewriter's box style: Unicode box-drawing
borders, a header row in upper case and centred (an odd leftover space goes
to the right), cells left-aligned with one space of padding on each side, no
lines between rows. Where a column merges repeated cells, a value equal to the
one above it is left blank (``opa inspect`` lists a namespace once for all
its files).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

__all__ = ["render_table", "display_width"]


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal (wide East Asian characters take two)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int, center: bool = False) -> str:
    gap = width - display_width(text)
    if gap <= 0:
        return text
    if center:
        left = gap // 2
        return " " * left + text + " " * (gap - left)
    return text + " " * gap


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], merge: Sequence[int] = ()) -> str:
    """The table as text (lines joined by newlines, no final newline).

    ``merge`` lists the columns whose repeated values are shown once."""
    titles = [h.upper() for h in header]
    shown = [list(r) for r in rows]
    for col in merge:
        previous: str | None = None
        for row in shown:
            value = row[col]
            if value == previous:
                row[col] = ""
            previous = value
    widths = [display_width(t) for t in titles]
    for row in shown:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], display_width(cell))

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def line(cells: Sequence[str], center: bool = False) -> str:
        return "│" + "│".join(" " + _pad(c, w, center) + " " for c, w in zip(cells, widths)) + "│"

    out = [rule("┌", "┬", "┐"), line(titles, center=True), rule("├", "┼", "┤")]
    out.extend(line(r) for r in shown)
    out.append(rule("└", "┴", "┘"))
    return "\n".join(out)
