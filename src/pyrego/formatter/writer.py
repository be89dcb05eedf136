"""Printing modules: package, imports, rules and heads, bodies and their
expressions (OPA's ``writeModule``, ``writeRule``, ``writeExpr`` ...)."""

from __future__ import annotations

from pyrego.formatter.nodes import (
    GENERATED_FILE,
    Comment,
    Every,
    Expr,
    Head,
    Import,
    Module,
    Package,
    Rule,
    SomeDecl,
    Term,
    With,
)
from pyrego.formatter.writer_base import UnexpectedComment, closing_loc, incomplete
from pyrego.formatter.writer_terms import INFIX, TermWriter, is_union_call, needs_parens, term_string

__all__ = ["Writer", "import_sort_key", "future_keyword"]


class Writer(TermWriter):
    """Prints a :class:`~pyrego.formatter.nodes.Module`."""

    # ------------------------------------------------------------ module

    def write_module(self, module: Module) -> None:
        others: list[Import | Rule] = [*module.imports, *module.rules]
        others.sort(key=lambda x: (x.loc.row, x.loc.col))
        comments = sorted(module.comments, key=lambda c: (c.loc.row, c.loc.col))
        added: list[Import] = []
        if _added_import_follows_rule(others):
            added = [x for x in others if isinstance(x, Import) and x.loc.file == GENERATED_FILE]
            others = [x for x in others if not (isinstance(x, Import) and x.loc.file == GENERATED_FILE)]
        comments = self.write_package(module.package, comments)
        comments = self.write_imports(added, comments)
        while others:
            i = 0
            while i < len(others) and isinstance(others[i], Import):
                i += 1
            imports = [x for x in others[:i] if isinstance(x, Import)]
            others = others[i:]
            comments = self.write_imports(imports, comments)
            i = 0
            while i < len(others) and isinstance(others[i], Rule):
                i += 1
            rules = [x for x in others[:i] if isinstance(x, Rule)]
            others = others[i:]
            comments = self.write_rules(rules, comments)
        for i, c in enumerate(comments):
            self.write_line(str(c))
            if i == len(comments) - 1:
                self.write("\n")

    def write_package(self, pkg: Package, comments: list[Comment]) -> list[Comment]:
        comments = self.insert_comments(comments, pkg.loc)
        self.start_line()
        self.write("package ")
        self.write_ref(pkg.path, None)
        self.blank_line()
        return comments

    # ------------------------------------------------------------ imports

    def write_imports(self, imports: list[Import], comments: list[Comment]) -> list[Comment]:
        attached: dict[int, Comment] = {}
        rest = []
        for c in comments:
            for imp in imports:
                if c.loc.row == imp.loc.row:
                    attached[id(imp)] = c
                    break
            else:
                rest.append(c)
        comments = rest
        for group in _group_imports(imports):
            comments = self.insert_comments(comments, group[0].loc)
            for imp in sorted(group, key=import_sort_key):
                self.start_line()
                self.write_import(imp)
                if id(imp) in attached:
                    self.write(" " + str(attached[id(imp)]))
                self.end_line()
            self.blank_line()
        return comments

    def write_import(self, imp: Import) -> None:
        self.write("import ")
        if future_keyword(imp) is not None:
            # future.keywords.<kw> is never written with brackets
            saved = self.opts.future_keywords, self.opts.rego_v1
            self.opts.future_keywords, self.opts.rego_v1 = [], False
            try:
                self.write_ref(imp.path.items, None)
            finally:
                self.opts.future_keywords, self.opts.rego_v1 = saved
        else:
            self.write_ref(imp.path.items, None)
        if imp.alias:
            self.write(" as " + imp.alias)

    # ------------------------------------------------------------ rules

    def write_rules(self, rules: list[Rule], comments: list[Comment]) -> list[Comment]:
        for i, rule in enumerate(rules):
            try:
                comments = self.insert_comments(comments, rule.loc)
            except UnexpectedComment as e:
                comments = e.comments
            try:
                comments = self.write_rule(rule, False, comments)
            except UnexpectedComment as e:
                comments = e.comments
            if i < len(rules) - 1 and self.groupable_one_liner(rule):
                nxt = rules[i + 1]
                if self.groupable_one_liner(nxt) and nxt.loc.row == rule.loc.row + 1:
                    continue  # adjacent one-liners stay together
            self.blank_line()
        return comments

    def groupable_one_liner(self, rule: Rule) -> bool:
        """Whether the rule is written on one line (and may then sit right
        below another one-liner, as in the source)."""
        if len(rule.body) > 1 or rule.default or rule.else_ is not None:
            return False
        if len(rule.body) == 1 and _is_set_term(rule.body[0]):
            return False  # (a lone set term keeps its braces)
        partial_set_exception = self.opts.contains or rule.head.value is not None
        return (self.opts.rego_v1 or self.opts.ifs) and partial_set_exception

    def write_rule(self, rule: Rule, is_else: bool, comments: list[Comment]) -> list[Comment]:
        if not is_else:
            self.start_line()
        if rule.default:
            self.write("default ")
        expanded_const = rule.const_body and rule.else_ is None
        self.write_comment_on_final_line = expanded_const
        unexpected = False
        try:
            comments = self.write_head(rule.head, rule.default, expanded_const, comments)
        except UnexpectedComment as e:
            comments = e.comments
            unexpected = True
        if not rule.body or expanded_const:
            self.end_line()
            return comments
        self.write_comment_on_final_line = True
        partial_set_exception = self.opts.contains or rule.head.value is not None
        uses_if = (self.opts.rego_v1 or self.opts.ifs) and partial_set_exception
        if uses_if:
            self.write(" if")
            if len(rule.body) == 1:
                # `if <expr>` stays on the head's (last) line, unless the
                # expression is a set term (then the braces are the body's)
                head_end_row = rule.head.loc.row + rule.head.loc.text.count("\n")
                first = rule.body[0]
                if first.loc.row == head_end_row and not _is_set_term(first):
                    self.write(" ")
                    comments = self.write_expr(first, comments)
                    self.end_line()
                    if rule.else_ is not None:
                        comments = self.write_else(rule, comments)
                    return comments
        if unexpected and comments:
            self.write(" { ")
        else:
            self.write(" {")
            self.end_line()
        if uses_if and not is_else:
            # a leading `x | y` at the brace of `p if {` would read as a comprehension
            self.mark_union_lead(rule.body[0])
        self.up()
        try:
            comments = self.write_body(rule.body, comments)
        except UnexpectedComment as e:
            comments = e.comments
        if rule.head.args:
            close = closing_loc("(", ")", "{", "}", rule.loc)
        elif rule.head.key is not None:
            close = closing_loc("[", "]", "{", "}", rule.loc)
        else:
            close = closing_loc("", "", "{", "}", rule.loc)
        comments = self.insert_comments(comments, close)
        self.down()
        self.start_line()
        self.write("}")
        if rule.else_ is not None:
            comments = self.write_else(rule, comments)
        return comments

    def write_else(self, rule: Rule, comments: list[Comment]) -> list[Comment]:
        """``} else ...`` when the source had it so, else a blank line and
        ``else`` on its own line."""
        else_ = rule.else_
        assert else_ is not None
        was_inline = False
        lines = rule.loc.text.split("\n")
        rel = else_.loc.row - rule.loc.row
        if 0 < rel < len(lines) and not lines[rel].strip().startswith("else"):
            was_inline = True
        comment_above = bool(comments and comments[0].loc.row - else_.head.loc.row < 0) or (
            self.before_end is not None
        )
        if not comment_above and was_inline:
            self.write(" ")
        else:
            self.blank_line()
            self.start_line()
        comments = self.insert_comments(comments, else_.head.loc)
        if comment_above and not was_inline:
            self.start_line()
        if else_.head.value is not None:
            else_.head.value.loc = else_.head.loc
        return self.write_rule(else_, True, comments)

    def write_head(self, head: Head, is_default: bool, expanded_const: bool, comments: list[Comment]) -> list[Comment]:
        mark, level, saved = len(self.buf), self.level, comments
        try:
            return self._write_head(head, is_default, expanded_const, comments)
        except UnexpectedComment as e:
            if e.complete:
                raise
            # OPA would lose the rest of the head: write it as it stands
            del self.buf[mark:]
            self.level = level
            raise UnexpectedComment(self.write_unformatted(head.loc, saved), complete=True) from None

    def _write_head(self, head: Head, is_default: bool, expanded_const: bool, comments: list[Comment]) -> list[Comment]:
        ref = head.ref
        if self.opts.ref_heads or len(ref) == 1:
            try:
                comments = self.write_ref(ref, comments)
            except UnexpectedComment as e:
                raise incomplete(e) from None
        else:
            # a comment inside the ref on the head's row: the head as written
            if comments and ref[1].loc.row == comments[0].loc.row:
                return self.write_unformatted(head.loc, comments)
            self.write(term_string(ref[0]) + "[" + term_string(ref[1]) + "]")
        try:
            if head.args:
                self.write("(")
                try:
                    args = list(head.args)
                    close = closing_loc("", "", "(", ")", head.loc)
                    comments = self.write_iterable(args, head.loc, close, comments, self.list_writer(False))  # type: ignore[arg-type]
                finally:
                    self.write(")")
            if head.key is not None and head.value is None and not self.opts.contains:  # v0's p[x]
                self.write("[")
                comments = self.write_term(head.key, comments)
                self.write("]")
        except UnexpectedComment as e:
            raise incomplete(e) from None
        if head.key is not None and head.value is None and self.opts.contains:
            self.write(" contains ")
            comments = self.write_term(head.key, comments)
        value = head.value
        if value is not None and (head.key is not None or not _is_true(value) or expanded_const or is_default):
            # in v1 a constant ref head keeps its value: a.b.c := true
            v1_ref_const = self.opts.rego_v1 and expanded_const and head.key is None and not head.args
            if head.implied_value and head.name != "else" and _is_true(value) and not v1_ref_const:
                return comments  # `f(1)`: the implied true is not written
            self.write(" := " if head.assign or self.opts.rego_v1 else " = ")
            comments = self.write_term(value, comments)
        return comments

    # ------------------------------------------------------------ bodies and expressions

    def write_body(self, body: list[Expr], comments: list[Comment]) -> list[Comment]:
        comments = self.insert_comments(comments, body[0].loc)
        for i, expr in enumerate(body):
            if i > 0:
                prev = body[i - 1]
                last_row = prev.loc.row + prev.loc.text.count("\n")
                if expr.loc.row > last_row + 1:
                    self.blank_line()  # keep one blank line where the source had some
            self.start_line()
            self.follows_expr = i > 0
            try:
                comments = self.write_expr(expr, comments)
            except UnexpectedComment as e:
                comments = e.comments
            self.follows_expr = False
            self.end_line()
        return comments

    def mark_union_lead(self, expr: Expr) -> None:
        """Parenthesise the set union that would lead the expression's text."""
        if expr.negated:
            return
        terms = expr.terms
        if not isinstance(terms, list):
            return
        name = terms[0].name
        if name == "or" and len(terms) == 3:
            self.paren_expr = expr
            return
        infix = INFIX.get(name)
        if infix is not None:
            lead = None
            if len(terms) == infix[1] + 1:
                lead = terms[1]
            elif len(terms) == infix[1] + 2:
                lead = terms[-1]
            if lead is not None and is_union_call(lead):
                self.paren_term = lead

    def write_expr(self, expr: Expr, comments: list[Comment]) -> list[Comment]:
        paren_terms = self.paren_expr is expr
        if paren_terms:
            self.paren_expr = None
        saved = comments
        failure: UnexpectedComment | None = None
        try:
            comments = self.insert_comments(comments, expr.loc)
        except UnexpectedComment as e:
            failure = incomplete(e)
        if not self.inline:
            self.start_line()
        if expr.negated:
            self.write("not ")
        mark, level = len(self.buf), self.level
        # a comment after text written as it stands must not swallow the `with`s
        final_comments = self.write_comment_on_final_line
        if expr.withs:
            self.write_comment_on_final_line = False
        try:
            if failure is None:
                saved = comments
                try:
                    comments = self.write_expr_terms(expr, paren_terms, comments)
                except UnexpectedComment as e:
                    failure = e
                if failure is None and self.follows_expr and not expr.negated and "".join(self.buf[mark : mark + 2]).startswith("-"):
                    # A line starting with a minus sign continues the one before
                    # (`a < 1` then `-1 <= b` reads as `a < 1 - 1 <= b`).
                    self.buf.insert(mark, "(")
                    self.write(")")
            if failure is not None and not failure.complete:
                # OPA would leave the expression half written: write it as it stands
                del self.buf[mark:]
                self.level = level
                assert expr.terms_loc is not None
                comments = self.write_unformatted(expr.terms_loc, saved)
            elif failure is not None:
                comments = failure.comments
        finally:
            self.write_comment_on_final_line = final_comments
        comments = self.write_withs(expr, comments)
        if failure is not None:
            raise UnexpectedComment(comments, complete=True)
        return comments

    def write_expr_terms(self, expr: Expr, paren_terms: bool, comments: list[Comment]) -> list[Comment]:
        if paren_terms:
            self.write("(")
        terms = expr.terms
        if isinstance(terms, SomeDecl):
            comments = self.write_some_decl(terms, comments)
        elif isinstance(terms, Every):
            comments = self.write_every(terms, comments)
        elif isinstance(terms, list):
            comments = self.write_function_call(terms, comments)
        else:
            comments = self.write_term(terms, comments)
        if paren_terms:
            self.write(")")
        return comments

    def write_withs(self, expr: Expr, comments: list[Comment]) -> list[Comment]:
        if not expr.withs:
            return comments
        withs = list(expr.withs)
        last_row = expr.terms_end_row
        if withs[0].loc.row == last_row:  # a `with` on the expression's last line stays there
            comments = self.write_with_safely(withs[0], comments, False)
            last_row = withs[0].loc.row
            withs = withs[1:]
        indented = False
        try:
            for w in withs:
                indent = w.loc.row > last_row
                if indent:
                    if not indented:
                        self.up()
                        indented = True
                    self.end_line()
                    self.start_line()
                    last_row = w.loc.row
                comments = self.write_with_safely(w, comments, indent)
        finally:
            if indented:
                self.down()
        return comments

    def write_function_call(self, terms: list[Term], comments: list[Comment]) -> list[Comment]:
        op = terms[0]
        name = op.name
        if name in ("internal.member_2", "internal.member_3"):
            return self.write_in_operator(False, terms[1:], comments, op.loc, name)
        infix = INFIX.get(name)
        if infix is None:
            return self.write_function_call_plain(terms, comments)
        symbol, arity = infix
        n = len(terms) - 1
        try:
            if n == arity:  # x != y
                comments = self.write_operand(terms[1], comments, needs_parens(terms[1], name, False), False)
            elif n == arity + 1:  # plus(x, y, z) is z = x + y
                comments = self.write_term(terms[3], comments)
                self.write(" = ")
                comments = self.write_operand(terms[1], comments, needs_parens(terms[1], name, False), False)
        except UnexpectedComment as e:
            raise incomplete(e) from None
        if n in (arity, arity + 1):
            self.write(" " + symbol + " ")
            return self.write_operand(terms[2], comments, needs_parens(terms[2], name, True), False)
        self.arity_error(terms[1:], name, op.loc)
        return self.write_function_call_plain(terms, comments)

    def write_with_safely(self, w: With, comments: list[Comment], indented: bool) -> list[Comment]:
        """A ``with``, or its source as it stands when a comment is in the way
        (OPA would drop it)."""
        mark, level, saved = len(self.buf), self.level, comments
        try:
            return self.write_with(w, comments, indented)
        except UnexpectedComment:
            del self.buf[mark:]
            self.level = level
            if not indented:
                self.write(" ")
            return self.write_unformatted(w.loc, saved)

    def write_with(self, w: With, comments: list[Comment], indented: bool) -> list[Comment]:
        comments = self.insert_comments(comments, w.loc)
        if not indented:
            self.write(" ")
        self.write("with ")
        comments = self.write_term(w.target, comments)
        self.write(" as ")
        try:
            comments = self.write_term(w.value, comments)
        except UnexpectedComment as e:
            comments = e.comments  # written as it stood; the next `with` goes on
        return comments

    def write_some_decl(self, decl: SomeDecl, comments: list[Comment]) -> list[Comment]:
        try:
            return self._write_some_decl(decl, comments)
        except UnexpectedComment as e:
            raise incomplete(e) from None

    def _write_some_decl(self, decl: SomeDecl, comments: list[Comment]) -> list[Comment]:
        comments = self.insert_comments(comments, decl.loc)
        self.write("some ")
        row = decl.loc.row
        for i, term in enumerate(decl.symbols):
            if term.kind == "var":
                if term.loc.row > row:
                    self.end_line()
                    self.start_line()
                    self.write(self.indent)
                    row = term.loc.row
                elif i > 0:
                    self.write(" ")
                comments = self.write_term(term, comments)
                if i < len(decl.symbols) - 1:
                    self.write(",")
            elif term.kind == "call":
                comments = self.write_in_operator(False, term.items[1:], comments, decl.loc, term.name)
        return comments

    def write_every(self, every: Every, comments: list[Comment]) -> list[Comment]:
        loc = every.loc
        try:
            comments = self.insert_comments(comments, loc)
            self.write("every ")
            if every.key is not None:
                comments = self.write_term(every.key, comments)
                self.write(", ")
            comments = self.write_term(every.value, comments)
            self.write(" in ")
            comments = self.write_term(every.domain, comments)
        except UnexpectedComment as e:
            raise incomplete(e) from None
        self.write(" {")
        try:
            comments = self.write_comprehension_body("{", "}", every.body, loc, loc, comments)
        except UnexpectedComment as e:
            comments = e.comments
        if len(every.body) == 1 and every.body[0].loc.row == every.loc.row:
            self.write(" ")
        self.write("}")
        return comments


# ---------------------------------------------------------------- helpers


def _added_import_follows_rule(others: list[Import | Rule]) -> bool:
    """Whether an import the formatter added would be written after a rule
    (where it would have no effect)."""
    rows = [x.loc.row for x in others if isinstance(x, Rule)]
    if not rows:
        return False
    first = min(rows)
    return any(isinstance(x, Import) and x.loc.file == GENERATED_FILE and x.loc.row >= first for x in others)


def _is_true(t: Term) -> bool:
    return t.kind == "boolean" and t.text == "true"


def _is_set_term(expr: Expr) -> bool:
    return not expr.negated and isinstance(expr.terms, Term) and expr.terms.kind == "set"


def _group_imports(imports: list[Import]) -> list[list[Import]]:
    """Runs of imports with no blank line between them."""
    groups: list[list[Import]] = []
    for imp in imports:
        if groups and imp.loc.row - groups[-1][-1].loc.row <= 1:
            groups[-1].append(imp)
        else:
            groups.append([imp])
    return groups


_SORT_ORDER = {"null": 0, "boolean": 1, "number": 2, "string": 3, "var": 4, "ref": 5}


def import_sort_key(imp: Import) -> tuple[tuple[tuple[int, str], ...], str]:
    """OPA's import order: by path (part by part), then alias."""
    parts = tuple((_SORT_ORDER.get(t.kind, 9), t.value or t.text) for t in imp.path.items)
    return parts, imp.alias


def future_keyword(imp: Import) -> str | None:
    """``kw`` for ``import future.keywords.kw``."""
    items = imp.path.items
    if len(items) == 3 and items[0].kind == "var" and items[0].value == "future":
        if items[1].kind == "string" and items[1].value == "keywords" and items[2].kind == "string":
            return items[2].value
    return None
