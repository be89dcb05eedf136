"""Printing terms: scalars, refs, calls and operators, collections,
comprehensions and template strings (OPA's ``writeTerm`` and friends)."""

from __future__ import annotations

import re

from pyrego.formatter.nodes import Comment, Expr, Loc, Term
from pyrego.formatter.writer_base import (
    Element,
    EntryWriter,
    UnexpectedComment,
    WriterBase,
    closing_loc,
    incomplete,
    partition_comments,
)

__all__ = ["INFIX", "TermWriter", "go_quote", "term_string"]

#: the declared arguments of the operators, as OPA's arity errors list them
_OPERATOR_ARGS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("plus", "minus", "mul", "div", "rem"), ("x: number", "y: number")),
    **dict.fromkeys(("equal", "neq", "lt", "lte", "gt", "gte"), ("x: any", "y: any")),
    **dict.fromkeys(("and", "or"), ("x: set[any]", "y: set[any]")),
    "internal.member_3": ("any", "any", "any"),
}

#: OPA's builtins written infix: name -> (operator, arity)
INFIX: dict[str, tuple[str, int]] = {
    "eq": ("=", 2),
    "assign": (":=", 2),
    "internal.member_2": ("in", 2),
    "internal.member_3": ("in", 3),
    "gt": (">", 2),
    "gte": (">=", 2),
    "lt": ("<", 2),
    "lte": ("<=", 2),
    "neq": ("!=", 2),
    "equal": ("==", 2),
    "plus": ("+", 2),
    "minus": ("-", 2),
    "mul": ("*", 2),
    "div": ("/", 2),
    "rem": ("%", 2),
    "and": ("&", 2),
    "or": ("|", 2),
}

_VAR_COMPATIBLE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
WILDCARD = "$wildcard"


class TermWriter(WriterBase):
    """The term printers."""

    def write_term(self, term: Term, comments: list[Comment]) -> list[Comment]:
        """A term; written as it stands in the source when a comment sits
        inside it where it cannot go (and then UnexpectedComment is raised
        with the comments left)."""
        if not comments:
            return self.write_term_parens(False, term, comments)
        # (comment lists are never changed in place: keeping a reference is enough)
        length, level, saved = len(self.buf), self.level, comments
        try:
            return self.write_term_parens(False, term, comments)
        except UnexpectedComment:
            del self.buf[length:]
            self.level = level
            text = term.loc.text
            if self.before_end is not None and text:
                end_row = term.loc.row + text.count("\n")
                if term.loc.row <= self.before_end.loc.row <= end_row:
                    self.before_end = None
            raise UnexpectedComment(self.write_unformatted(term.loc, saved), complete=True) from None

    def write_term_parens(self, parens: bool, term: Term, comments: list[Comment]) -> list[Comment]:
        if self.paren_term is term:
            self.paren_term = None
            parens = True
        comments = self.insert_comments(comments, term.loc)
        if not self.inline:
            self.start_line()
        kind = term.kind
        if kind == "ref":
            comments = self.write_ref(term.items, comments)
        elif kind == "object":
            comments = self.write_object(term, comments)
        elif kind == "array":
            comments = self.write_list("[", "]", term, comments)
        elif kind == "set":
            comments = self.write_set(term, comments)
        elif kind in ("arraycompr", "setcompr"):
            opening, closing = ("[", "]") if kind == "arraycompr" else ("{", "}")
            self.write(opening)
            try:
                assert term.term is not None
                comments = self.write_comprehension(opening, closing, term.term, term.body, term.loc, comments)
            finally:
                self.write(closing)
        elif kind == "objectcompr":
            comments = self.write_object_comprehension(term, comments)
        elif kind == "string":
            self.write_string(term)
        elif kind == "template":
            comments = self.write_template(term, comments)
        elif kind == "var":
            self.write(format_var(term.value))
        elif kind == "call":
            comments = self.write_call(parens, term, comments)
        else:  # null, boolean, number, verbatim
            self.write(term.text)
        if not self.inline:
            self.start_line()
        return comments

    def write_string(self, term: Term) -> None:
        """A string as written (raw or quoted), or quoted afresh when its
        location's text is not a string literal."""
        text = term.loc.text
        if text[:1] == "`":
            self.write(text)
            return
        quote = text[-1:]
        if quote in ('"', "`") and quote in text:
            self.write(quote + text.split(quote, 1)[1])
        else:
            self.write(go_quote(term.value))

    # ------------------------------------------------------------ refs

    def write_ref(self, items: list[Term], comments: list[Comment] | None) -> list[Comment]:
        comments = comments or []
        if not items:
            return comments
        head = items[0]
        parens = head.kind == "call" and head.loc.text[:1] == "("
        comments = self.write_term_parens(parens, head, comments)
        for part in items[1:]:
            if part.kind == "string":
                self.write_ref_string_path(part.value, part.loc)
            elif part.kind == "var":
                self.write("[" + format_var(part.value) + "]")
            else:
                self.write("[")
                try:
                    comments = self.write_term(part, comments)
                except UnexpectedComment as e:
                    comments = e.comments
                    self.write("\n")  # so that the ']' is not part of the comment
                self.write("]")
        return comments

    def write_ref_string_path(self, s: str, loc: Loc) -> None:
        if self.should_bracket(s, loc):
            self.write("[" + go_quote(s) + "]")
        else:
            self.write("." + s)

    def should_bracket(self, s: str, loc: Loc) -> bool:
        if not _VAR_COMPATIBLE.fullmatch(s):
            return True
        if s in self.opts.keywords():
            if not self.opts.allow_keywords_in_refs:
                return True
            if loc.text[:1] == '"':  # written as p["not"]: kept so
                return True
        return False

    # ------------------------------------------------------------ calls

    def write_call(self, parens: bool, term: Term, comments: list[Comment]) -> list[Comment]:
        infix = INFIX.get(term.name)
        items = term.items
        if infix is None:
            return self.write_function_call_plain(items, comments)
        op, arity = infix
        if op == "in":
            return self.write_in_operator(True, items[1:], comments, term.loc, term.name)
        if parens:
            self.write("(")
        if arity != len(items) - 1:
            self.arity_error(items[1:], term.name, term.loc)
            return comments
        comments = self.write_operand(items[1], comments, _is_member(items[1]))
        self.write(" " + op + " ")
        comments = self.write_operand(items[2], comments, _is_member(items[2]))
        if parens:
            self.write(")")
        return comments

    def write_operand(self, term: Term, comments: list[Comment], wrap: bool, nested: bool = True) -> list[Comment]:
        """An operand of an infix operator. ``wrap`` puts it in parentheses
        where OPA would not but reading it back would group it otherwise
        (``x == (a in b)``)."""
        if wrap:
            self.write("(")
        try:
            if nested:
                return self.write_term_parens(True, term, comments)
            return self.write_term(term, comments)
        finally:
            if wrap:
                self.write(")")

    def arity_error(self, operands: list[Term], name: str, loc: Loc) -> None:
        have = ",".join(_value_name(t) for t in operands)
        want = ",".join(_OPERATOR_ARGS.get(name, ("any", "any")))
        self.errors.append((loc, f"{name}: arity mismatch\n\thave: ({have})\n\twant: ({want})"))

    def write_in_operator(
        self, parens: bool, operands: list[Term], comments: list[Comment], loc: Loc, name: str
    ) -> list[Comment]:
        arity = INFIX[name][1]
        if len(operands) != arity:
            self.arity_error(operands, name, loc)
            return comments
        if arity == 2:  # (`in` groups to the left: a left operand `a in b` needs no parentheses)
            try:
                comments = self.write_term_parens(True, operands[0], comments)
            except UnexpectedComment as e:
                raise incomplete(e) from None
            self.write(" in ")
            return self.write_operand(operands[1], comments, _is_member(operands[1]))
        if parens:
            self.write("(")
        try:
            comments = self.write_operand(operands[0], comments, _is_member(operands[0]))
            self.write(", ")
            comments = self.write_operand(operands[1], comments, _is_member(operands[1]))
            self.write(" in ")
        except UnexpectedComment as e:
            raise incomplete(e) from None
        try:
            comments = self.write_operand(operands[2], comments, _is_member(operands[2]))
        except UnexpectedComment as e:
            raise incomplete(e) if parens else e from None
        if parens:
            self.write(")")
        return comments

    def write_function_call_plain(self, items: list[Term], comments: list[Comment]) -> list[Comment]:
        op = items[0]
        if op.kind == "ref":
            comments = self.write_ref(op.items, comments)
        else:
            self.write(op.text or op.value)
        self.write("(")
        try:
            args: list[Element] = list(items[1:])
            loc = op.loc
            return self.write_iterable(args, loc, closing_loc("", "", "(", ")", loc), comments, self.list_writer(False))
        except UnexpectedComment as e:
            raise incomplete(e) from None
        finally:
            self.write(")")

    # ------------------------------------------------------------ collections

    def write_object(self, term: Term, comments: list[Comment]) -> list[Comment]:
        self.write("{")
        try:
            pairs: list[Element] = list(term.pairs)
            close = closing_loc("", "", "{", "}", term.loc)
            return self.write_iterable(pairs, term.loc, close, comments, self.object_writer())
        finally:
            self.write("}")

    def write_list(self, opening: str, closing: str, term: Term, comments: list[Comment]) -> list[Comment]:
        self.write(opening)
        try:
            items: list[Element] = list(term.items)
            close = closing_loc("", "", opening, closing, term.loc)
            return self.write_iterable(items, term.loc, close, comments, self.list_writer(True))
        finally:
            self.write(closing)

    def write_set(self, term: Term, comments: list[Comment]) -> list[Comment]:
        if not term.items:
            self.write("set()")
            return self.insert_comments(comments, closing_loc("", "", "(", ")", term.loc))
        return self.write_list("{", "}", term, comments)

    def object_writer(self) -> EntryWriter:
        def write_entry(entry: Element, comments: list[Comment]) -> list[Comment]:
            assert isinstance(entry, tuple)
            key, value = entry
            paren = is_union_call(key)
            if paren:
                self.write("(")
            comments = self.write_term(key, comments)
            if paren:
                self.write(")")
            self.write(": ")
            if is_union_call(value):
                self.write("(")
                try:
                    return self.write_term(value, comments)
                finally:
                    self.write(")")
            return self.write_term(value, comments)

        return write_entry

    def list_writer(self, paren_union_calls: bool) -> EntryWriter:
        def write_entry(entry: Element, comments: list[Comment]) -> list[Comment]:
            assert isinstance(entry, Term)
            if is_union_call(entry) and (paren_union_calls or entry.loc.text[:1] == "("):
                self.write("(")
                try:
                    return self.write_term(entry, comments)
                finally:
                    self.write(")")
            return self.write_term(entry, comments)

        return write_entry

    # ------------------------------------------------------------ comprehensions

    def write_object_comprehension(self, term: Term, comments: list[Comment]) -> list[Comment]:
        assert term.key is not None and term.term is not None
        self.write("{")
        try:
            paren = is_union_call(term.key)
            if paren:
                self.write("(")
            comments = self.write_term(term.key, comments)
            if paren:
                self.write(")")
            self.write(": ")
            # the value stays on the opening row (its own text kept)
            v = term.term.loc
            term.term.loc = Loc(term.loc.row, v.col, v.text, v.offset, v.file)
            return self.write_comprehension("{", "}", term.term, term.body, term.loc, comments)
        finally:
            self.write("}")

    def write_comprehension(
        self, opening: str, closing: str, term: Term, body: list[Expr], loc: Loc, comments: list[Comment]
    ) -> list[Comment]:
        if term.loc.row - loc.row >= 1:
            self.end_line()
            self.start_line()
        parens = term.kind == "call" and (is_union_call(term) or term.loc.text[:1] == "(")
        comments = self.write_term_parens(parens, term, comments)
        self.write(" |")
        return self.write_comprehension_body(opening, closing, body, term.loc, loc, comments)

    def write_comprehension_body(
        self, opening: str, closing: str, body: list[Expr], term: Loc, compr: Loc, comments: list[Comment]
    ) -> list[Comment]:
        exprs: list[Element] = list(body)
        lines = self.group_iterable(exprs, term)
        if body[0].loc.row - term.row > 0 or len(lines) > 1:
            self.end_line()
            self.up()
            try:
                comments = self.write_body(body, comments)
                return self.insert_comments(comments, closing_loc("", "", opening, closing, compr))
            finally:
                self.down()
                self.start_line()
        self.write(" ")
        for expr in body[:-1]:
            comments = self.write_expr(expr, comments)
            self.write("; ")
        comments = self.write_expr(body[-1], comments)
        return self.insert_comments(comments, closing_loc("", "", opening, closing, compr))

    # ------------------------------------------------------------ template strings

    def write_template(self, term: Term, comments: list[Comment]) -> list[Comment]:
        quote = "`" if term.raw else '"'
        self.write("$" + quote)
        parts = term.parts
        for i, part in enumerate(parts):
            if isinstance(part, Expr):
                self.write("{")
                self.up()
                if self.before_end is not None and _inside(self.before_end.loc, term.loc):
                    # (a comment after the `{`; OPA also breaks for one held from
                    # before the template, which leaves a comment inside it)
                    self.end_line()
                    self.start_line()
                else:
                    before = partition_comments(comments, part.loc)[0]
                    if before:
                        self.write(" ")
                        self.inline = True
                        self.write_comments(before)
                        comments = comments[len(before) :]
                comments = self.write_expr(part, comments)
                if i + 1 < len(parts):
                    before = partition_comments(comments, parts[i + 1].loc)[0]
                    if before:
                        self.end_line()
                        self.write_comments(before)
                        comments = comments[len(before) :]
                        self.start_line()
                self.write("}")
                self.down()
            elif part.name == "piece":  # text as written
                self.write(part.text)
            elif part.kind == "string":  # an embedded constant string: inlined
                text = part.value if term.raw else go_quote(part.value)[1:-1]
                self.write(text.replace("{", "\\{"))
            else:
                self.write(part.text)
        self.write(quote)
        return comments

    # (implemented by the statement writer)
    def write_body(self, body: list[Expr], comments: list[Comment]) -> list[Comment]:
        raise NotImplementedError

    def write_expr(self, expr: Expr, comments: list[Comment]) -> list[Comment]:
        raise NotImplementedError


#: how tightly infix operators bind (the parser's precedence; `in` loosest)
PRECEDENCE = {
    **dict.fromkeys(("equal", "neq", "lt", "lte", "gt", "gte"), 1),
    "or": 2,
    "and": 3,
    **dict.fromkeys(("plus", "minus"), 4),
    **dict.fromkeys(("mul", "div", "rem"), 5),
    **dict.fromkeys(("internal.member_2", "internal.member_3"), 0),
}


def _is_member(t: Term) -> bool:
    return t.kind == "call" and t.name == "internal.member_2"


def needs_parens(operand: Term, op_name: str, right: bool) -> bool:
    """Whether a bare infix-call operand of ``op_name`` would be read back
    grouped differently (lower precedence, or equal on the right)."""
    if operand.kind != "call" or operand.name not in PRECEDENCE or op_name not in PRECEDENCE:
        return False
    p, q = PRECEDENCE[operand.name], PRECEDENCE[op_name]
    return p < q or (right and p == q and operand.name != "internal.member_3")


def _inside(loc: Loc, outer: Loc) -> bool:
    return outer.offset <= loc.offset < outer.offset + len(outer.text)


def format_var(name: str) -> str:
    return "_" if name.startswith(WILDCARD) else name


def is_union_call(t: Term) -> bool:
    return t.kind == "call" and t.name == "or"


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``: a double-quoted literal escaping what is not printable."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        else:
            code = ord(ch)
            if code < 0x20 or code == 0x7F:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def term_string(t: Term) -> str:
    """A term as OPA's ``String()`` writes it (used for ``p[k]`` heads in v0 style)."""
    kind = t.kind
    if kind in ("null", "boolean", "number"):
        return t.text
    if kind == "string":
        return go_quote(t.value)
    if kind == "var":
        return format_var(t.value)
    if kind == "ref":
        out = term_string(t.items[0])
        for p in t.items[1:]:
            if p.kind == "string" and _VAR_COMPATIBLE.fullmatch(p.value) and p.value not in _STRING_KEYWORDS:
                out += "." + p.value
            else:
                out += "[" + term_string(p) + "]"
        return out
    if kind == "array":
        return "[" + ", ".join(term_string(x) for x in t.items) + "]"
    if kind == "set":
        return "{" + ", ".join(term_string(x) for x in t.items) + "}" if t.items else "set()"
    if kind == "object":
        return "{" + ", ".join(f"{term_string(k)}: {term_string(v)}" for k, v in t.pairs) + "}"
    if kind == "call":
        return term_string(t.items[0]) + "(" + ", ".join(term_string(x) for x in t.items[1:]) + ")"
    return t.loc.text


_STRING_KEYWORDS = frozenset(
    ["not", "package", "import", "as", "default", "else", "with", "null", "true", "false", "some"]
)


def _value_name(t: Term) -> str:
    return {"objectcompr": "objectcomprehension", "arraycompr": "arraycomprehension", "setcompr": "setcomprehension"}.get(
        t.kind, t.kind
    )
