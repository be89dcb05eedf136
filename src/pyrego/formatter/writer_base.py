"""The printer's state: the output, indentation, and comment placement.

This follows OPA's ``format`` package (``v1/format/format.go``) closely,
because byte-for-byte agreement depends on its exact order of operations:
comments before a node's row are written on their own lines before it, a
comment on the node's row is held and written at the end of the line, and a
composite whose items share one row but which has a comment inside is written
as it stands in the source (:class:`UnexpectedComment`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Union

from pyrego.formatter.nodes import GENERATED_FILE, NEGATIVE_ROW, Comment, Every, Expr, Loc, SomeDecl, Term

__all__ = ["FmtOpts", "UnexpectedComment", "WriterBase", "Element", "EntryWriter", "incomplete"]

#: What collections, argument lists and comprehension bodies are made of.
Element = Union[Term, tuple[Term, Term], Expr]
EntryWriter = Callable[[Element, list[Comment]], list[Comment]]


class UnexpectedComment(Exception):
    """A comment sits where the printer cannot put it; the node is then written
    as it stands in the source. ``comments`` are those still to place.

    ``complete`` says whether everything up to here was written (a term
    written as it stands); when an enclosing writer still had more to write,
    it marks the error incomplete, and the expression or head that holds it
    is then written as it stands instead (OPA would lose the rest)."""

    def __init__(self, comments: list[Comment], complete: bool = False) -> None:
        super().__init__("unexpected comment")
        self.comments = comments
        self.complete = complete


def incomplete(err: UnexpectedComment) -> UnexpectedComment:
    """The same error, after which something was left unwritten."""
    err.complete = False
    return err


@dataclass
class FmtOpts:
    """What the output may use (OPA's fmtOpts)."""

    #: partial sets written ``p contains x``
    contains: bool = False
    #: bodies introduced by ``if``
    ifs: bool = False
    #: some rule needs a ref head, so all heads are written as refs
    ref_heads: bool = False
    rego_v1: bool = False
    #: keywords imported from future.keywords (v0)
    future_keywords: list[str] = field(default_factory=list)
    allow_keywords_in_refs: bool = True

    def keywords(self) -> list[str]:
        base = ["not", "package", "import", "as", "default", "else", "with", "null", "true", "false", "some"]
        if self.rego_v1:
            return base + ["contains", "every", "if", "in"] + self.future_keywords
        return base + self.future_keywords


class WriterBase:
    """Output buffer, indentation and comment bookkeeping."""

    indent = "\t"

    def __init__(self, opts: FmtOpts) -> None:
        self.opts = opts
        self.buf: list[str] = []
        self.level = 0
        self.inline = False
        #: a comment to write at the end of the current line
        self.before_end: Comment | None = None
        #: keep before_end for the line after the next (multi-line collections)
        self.delay = False
        self.write_comment_on_final_line = False
        #: an expression, and a term, to write in parentheses when next met
        self.paren_expr: Expr | None = None
        #: the expression being written is on the line after another one's
        self.follows_expr = False
        self.paren_term: Term | None = None
        #: whether the module has names OPA treats as generated (`__local...`)
        self.generated_vars = True
        #: errors found while printing (arity mismatches)
        self.errors: list[tuple[Loc, str]] = []

    # ------------------------------------------------------------ output

    def write(self, s: str) -> None:
        self.buf.append(s)

    def start_line(self) -> None:
        """Begin a line at the current indentation."""
        self.inline = True
        if self.level:
            self.buf.append(self.indent * self.level)

    def end_line(self) -> None:
        """End the line, with the held comment if any."""
        self.inline = False
        if self.before_end is not None and not self.delay:
            self.buf.append(" " + str(self.before_end))
            self.before_end = None
        self.delay = False
        self.buf.append("\n")

    def blank_line(self) -> None:
        if self.inline:
            self.end_line()
        self.buf.append("\n")

    def write_line(self, s: str) -> None:
        if not self.inline:
            self.start_line()
        self.buf.append(s)
        self.end_line()

    def start_multiline_seq(self) -> None:
        self.end_line()
        self.up()
        self.start_line()

    def up(self) -> None:
        self.level += 1

    def down(self) -> None:
        if self.level == 0:
            raise ValueError("negative indentation level")
        self.level -= 1

    def text(self) -> str:
        """The output, with trailing newlines squashed into one."""
        out = "".join(self.buf)
        if out.endswith("\n"):
            out = out.rstrip("\n") + "\n"
        return out

    # ------------------------------------------------------------ comments

    def insert_comments(self, comments: list[Comment] | None, loc: Loc) -> list[Comment]:
        """Write the comments before ``loc``'s row, hold the one on its row;
        return the rest."""
        before, at, after = partition_comments(comments or [], loc)
        self.write_comments(before)
        if before and loc.row - before[-1].loc.row > 1:
            self.blank_line()
        if not self.before_line_end(at):
            raise UnexpectedComment(after)
        return after

    def before_line_end(self, c: Comment | None) -> bool:
        """Hold ``c`` for the end of the line; False if one is held already."""
        if self.before_end is not None:
            if c is None:
                return True
            self.before_end = None
            return False
        self.before_end = c
        return True

    def delay_before_end(self) -> None:
        self.delay = True

    def write_comments(self, comments: list[Comment]) -> None:
        in_metadata = False
        for i, c in enumerate(comments):
            if i > 0:
                gap = c.loc.row - comments[i - 1].loc.row
                if gap > 1:
                    self.blank_line()
                    in_metadata = False
                elif gap == 1 and in_metadata and is_metadata_comment(c):
                    self.blank_line()
            if is_metadata_comment(c):
                in_metadata = True
            self.write_line(str(c))

    def write_unformatted(self, loc: Loc, current: list[Comment]) -> list[Comment]:
        """Write a node's source as it stands; drop the comments inside it."""
        if not loc.text:
            raise ValueError("original unformatted text is empty")
        rows = loc.text.count("\n") + 1
        self.write(loc.text)
        last_row = loc.row + rows - 1
        out = []
        for c in current:
            if self.write_comment_on_final_line and c.loc.row == last_row:
                self.write(" ")
                self.write(c.loc.text)
                continue
            if c.loc.row < last_row:
                continue
            out.append(c)
        return out

    # ------------------------------------------------------------ collections

    def group_iterable(self, elements: list[Element], last: Loc) -> list[list[Element]]:
        """Group elements by source row: one group per run on the same row."""
        if self.generated_vars:  # (only when the text has `__local` names at all)
            for elem in elements:
                if _has_generated_location(elem):
                    return [elements]
        elements = sorted(elements, key=_row_col)
        lines: list[list[Element]] = []
        cur: list[Element] = []
        for i, elem in enumerate(elements):
            loc = element_loc(elem)
            if loc.row - last.row > 0 and i > 0:
                lines.append(cur)
                cur = []
            last = loc
            cur.append(elem)
        lines.append(cur)
        return lines

    def write_iterable(
        self, elements: list[Element], last: Loc, close: Loc, comments: list[Comment], fn: EntryWriter
    ) -> list[Comment]:
        """Items on one line, or one line per source row when they span rows
        (or a newline precedes the first item)."""
        lines = self.group_iterable(elements, last)
        newline_precedes = False
        if len(lines) == 1:
            first_after = bisect_right(comments, last.row, key=_comment_row)
            if first_after < len(comments) and comments[first_after].loc.row < close.row:
                raise UnexpectedComment(comments)
            if lines[0]:
                first = element_loc(lines[0][0])  # (OPA sorts the elements in place first)
                cut = last.text.find(first.text) if first.text else 0
                if cut > 0:
                    newline_precedes = last.text.find("\n", 0, cut) > 0
        multiline = len(lines) > 1 or newline_precedes
        if multiline:
            self.delay_before_end()
            self.start_multiline_seq()
        for line in lines[:-1]:
            comments = self.write_iterable_line(line, comments, fn)
            self.write(",")
            self.end_line()
            self.start_line()
        comments = self.write_iterable_line(lines[-1], comments, fn)
        if multiline:
            self.write(",")
            self.end_line()
            comments = self.insert_comments(comments, close)
            self.down()
            self.start_line()
        return comments

    def write_iterable_line(self, elements: list[Element], comments: list[Comment], fn: EntryWriter) -> list[Comment]:
        for i, elem in enumerate(elements):
            if i:
                self.write(", ")
            comments = fn(elem, comments)
        return comments


# ---------------------------------------------------------------- helpers


def partition_comments(comments: list[Comment], loc: Loc) -> tuple[list[Comment], Comment | None, list[Comment]]:
    """Comments before ``loc``'s row, the one on it, and those after.

    The comments waiting to be placed are always in source order (each step
    hands on a slice or a filtered copy), so the rows are found by bisection.
    """
    row = loc.row
    if not comments or comments[0].loc.row > row:
        return [], None, comments
    i = bisect_left(comments, row, key=_comment_row)
    j = bisect_right(comments, row, lo=i, key=_comment_row)
    return comments[:i], (comments[j - 1] if j > i else None), comments[j:]


def _comment_row(c: Comment) -> int:
    return c.loc.row


def is_metadata_comment(c: Comment) -> bool:
    return c.loc.col == 1 and c.text.strip().startswith("METADATA")


def closing_loc(skip_open: str, skip_close: str, open_char: str, close_char: str, loc: Loc) -> Loc:
    """The row of the bracket closing the first ``open_char`` in ``loc``'s text
    (after skipping past a ``skip_open``...``skip_close`` group)."""
    text = loc.text
    i = offset = 0
    if skip_open:
        i, offset = _skip_past(skip_open, skip_close, text)
    n = len(text)
    while i < n and text[i] != open_char:
        i += 1
    if i >= n:
        return NEGATIVE_ROW
    state = 1
    while state > 0:
        i += 1
        if i >= n:
            return NEGATIVE_ROW
        c = text[i]
        if c == open_char:
            state += 1
        elif c == close_char:
            state -= 1
        elif c == "\n":
            offset += 1
    return Loc(loc.row + offset, 0)


def _skip_past(open_char: str, close_char: str, text: str) -> tuple[int, int]:
    i = 0
    n = len(text)
    while i < n and text[i] != open_char:
        i += 1
    state = 1
    offset = 0
    while state > 0:
        i += 1
        if i >= n:
            return i, offset
        c = text[i]
        if c == open_char:
            state += 1
        elif c == close_char:
            state -= 1
        elif c == "\n":
            offset += 1
    return i, offset


def element_loc(elem: Element) -> Loc:
    if isinstance(elem, tuple):
        return elem[0].loc
    return elem.loc


def _row_col(elem: Element) -> tuple[int, int]:
    loc = element_loc(elem)
    return loc.row, loc.col


def _has_generated_location(elem: Element) -> bool:
    for t in walk_terms(elem):
        if t.loc.file == GENERATED_FILE:
            return True
        if t.kind == "var" and t.value.startswith("__local"):
            return True
    return False


def walk_terms(node: Element | SomeDecl | Every | list[Term] | None) -> Iterator[Term]:
    """Every term in a node, depth first."""
    if node is None:
        return
    if isinstance(node, tuple):
        yield from walk_terms(node[0])
        yield from walk_terms(node[1])
    elif isinstance(node, list):
        for t in node:
            yield from walk_terms(t)
    elif isinstance(node, Term):
        yield node
        for t in node.items:
            yield from walk_terms(t)
        for k, v in node.pairs:
            yield from walk_terms(k)
            yield from walk_terms(v)
        yield from walk_terms(node.key)
        yield from walk_terms(node.term)
        for e in node.body:
            yield from walk_terms(e)
        for p in node.parts:
            yield from walk_terms(p)
    elif isinstance(node, Expr):
        yield from walk_terms(node.terms)
        for w in node.withs:
            yield from walk_terms(w.target)
            yield from walk_terms(w.value)
    elif isinstance(node, SomeDecl):
        yield from walk_terms(node.symbols)
    elif isinstance(node, Every):
        yield from walk_terms(node.key)
        yield from walk_terms(node.value)
        yield from walk_terms(node.domain)
        for e in node.body:
            yield from walk_terms(e)
