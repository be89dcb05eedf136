"""Where a test failed, found by evaluating its body piece by piece.

OPA finds the failed expression in its evaluation trace. pyrego runs compiled
code that keeps no trace, so the runner asks again: the test rule's body (as
the compiler resolved it) is evaluated as a query one expression longer each
time, ``body[:1]``, ``body[:2]``, ...; the first prefix with no solution ends
at the expression that failed, and the last solution of the prefix before it
gives the values of that expression's variables. Only failed tests pay for
this, and only when their failure is shown.

The same prefix queries give the cases a parameterized test started: OPA
injects ``internal.test_case([key...])`` after the first expressions that bind
the head's key variables and records every case that reached it; a case that
started but produced no ``true`` value failed. A rule that calls
``internal.test_case`` itself marks the point with that call.

The probes read compiled programs through the engine's internal query
interface (``program()``: ``compile_body``, ``execute``), the one
``eval_query`` uses.
"""

from __future__ import annotations

import re
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.builtins.sprintf import format_value as rego_text  # a value as OPA prints a term
from pyrego.errors import RegoError
from pyrego.runtime.values import UNDEF, thaw
from pyrego.testing.results import FailureLine, VarValue

#: Longest value text shown for a variable (OPA's maxPrettyExprVarWidth).
MAX_VALUE_WIDTH = 64
_UNIQUE_SUFFIX = re.compile(r"#\d+$")
_CASE_VAR = "__pyrego_test_case__"
_ROOTS = frozenset(("input", "data"))


class RuleProbe:
    """Evaluates prefixes of one test rule's body in a loaded engine."""

    def __init__(self, engine: Any, path: tuple[str, ...], location: Any, sources: dict[str, str]) -> None:
        self.engine = engine
        self.sources = sources
        self.rule = _resolved_rule(engine, path, location)

    # -- plain tests ---------------------------------------------------------

    def failure_line(self) -> FailureLine | None:
        """The expression the rule's body failed at, with its variables' values (None if none found)."""
        rule = self.rule
        if rule is None or not rule.body:
            return None
        previous: list[dict[str, Any]] = [{}]
        for k in range(1, len(rule.body) + 1):
            solutions = self._solutions(rule.body[:k])
            if solutions is None:
                return None
            if not solutions:
                return self._describe(rule.body[k - 1], previous[-1] if previous else {})
            previous = solutions
        return None

    # -- parameterized tests -------------------------------------------------

    def key_terms(self) -> tuple[ast.Term, ...]:
        """The head ref's terms after the test's name (the case key)."""
        if self.rule is None:
            return ()
        from pyrego.testing.discovery import find_test_name

        found = find_test_name(self.rule)
        ref = self.rule.head.ref
        return (ref.head, *ref.path)[found[0] + 1 :] if found is not None else ()

    def case_start(self) -> int:
        """How many body expressions run before a case counts as started (OPA's injection point)."""
        rule = self.rule
        assert rule is not None
        for i, e in enumerate(rule.body):
            s = e.statement
            if type(s) is ast.Call and s.op == "internal.test_case":
                return i + 1
        wanted: set[str] = set()
        for term in self.key_terms():
            _term_var_names(term, wanted)
        first: dict[str, int] = {}
        for i, e in enumerate(rule.body):
            names: set[str] = set()
            _stmt_var_names(e, names)
            for name in names & wanted:
                first.setdefault(name, i)
        return max(first.values()) + 1 if first else 0

    def started_cases(self, upto: int | None = None) -> list[tuple[tuple[str, ...], dict[str, Any]]] | None:
        """The case keys (as names) that ``body[:upto]`` reaches, with their bindings, in order."""
        rule = self.rule
        if rule is None:
            return None
        if upto is None:
            upto = self.case_start()
        keys = self.key_terms()
        marker = ast.Expr(ast.Unify(ast.Var(_CASE_VAR), ast.Array(keys)))
        solutions = self._solutions(rule.body[:upto] + (marker,))
        if solutions is None:
            return None
        out = []
        for bindings in solutions:
            case = bindings.get(_CASE_VAR)
            if type(case) is list:
                out.append((tuple(case_name(v) for v in case), bindings))
        return out

    def case_failures(self, failed: set[tuple[str, ...]]) -> dict[tuple[str, ...], FailureLine]:
        """For each failed case, the expression it stopped at."""
        rule = self.rule
        if rule is None or not failed:
            return {}
        start = self.case_start()
        previous = self.started_cases(start)
        if previous is None:
            return {}
        out: dict[tuple[str, ...], FailureLine] = {}
        for k in range(start + 1, len(rule.body) + 1):
            current = self.started_cases(k)
            if current is None:
                return out
            reached = {case for case, _ in current}
            for case, _ in previous:
                if case in failed and case not in out and case not in reached:
                    line = self._describe(rule.body[k - 1], _last_bindings(previous, case))
                    if line is not None:
                        out[case] = line
            previous = current
        return out

    # -- helpers -------------------------------------------------------------

    def _solutions(self, body: ast.Body) -> list[dict[str, Any]] | None:
        engine = self.engine
        try:
            compiled = engine.program()
            query = compiled.compile_body(body, [""] * len(body), check_types=False)  # (the rule was checked)
            # A query reports an expression that is false as a value; in a rule body it fails.
            return [bindings for bindings, values in compiled.execute(query) if not any(v is False for v in values)]
        except RegoError:
            return None
        finally:
            engine.take_prints()  # a probe's print() output is not the test's

    def _describe(self, expr: ast.Expr, bindings: dict[str, Any]) -> FailureLine | None:
        loc = expr.location
        text = self.sources.get(loc.file)
        if text is None or loc.row < 1:
            return None
        lines = text.splitlines()
        if loc.row > len(lines):
            return None
        source = expression_source(lines, loc.row, loc.col)
        first_line = lines[loc.row - 1]
        pad = "".join("\t" if c == "\t" else " " for c in first_line[: loc.col - 1])
        variables = _expression_vars(expr, bindings, lines)
        return FailureLine(loc.file, loc.row, loc.col, pad + source, tuple(variables))


def _last_bindings(solutions: list[tuple[tuple[str, ...], dict[str, Any]]], case: tuple[str, ...]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for c, bindings in solutions:
        if c == case:
            found = bindings
    return found


def _resolved_rule(engine: Any, path: tuple[str, ...], location: Any) -> ast.Rule | None:
    """The compiled (name-resolved) rule defined at ``location`` for document ``path``."""
    try:
        program = engine.program()
    except RegoError:
        return None
    node = program.tree.nodes.get(path)
    if node is None:
        return None
    for rule in [*node.rules, node.default]:
        if rule is not None and rule.location == location:
            return rule  # type: ignore[no-any-return]
    return None


# ---------------------------------------------------------------- variables


def _expression_vars(expr: ast.Expr, bindings: dict[str, Any], lines: list[str]) -> list[VarValue]:
    """The user variables of ``expr`` with their values, first occurrence each (OPA's walk)."""
    found: dict[str, VarValue] = {}
    show_unbound = not expr.negated

    def visit(term: Any) -> None:
        t = type(term)
        if t is ast.Var:
            name = term.name
            title = _UNIQUE_SUFFIX.sub("", name)
            if name.startswith("$") or title in _ROOTS or not title:
                return
            loc = term.location
            value = bindings.get(name, UNDEF)
            if value is UNDEF and not show_unbound:
                return
            text = "undefined" if value is UNDEF else rego_text(value)
            old = found.get(title)
            if old is None or old.value == "undefined":
                line = lines[loc.row - 1] if 0 < loc.row <= len(lines) else ""
                tabs = tuple(i + 1 for i, ch in enumerate(line[: loc.col - 1]) if ch == "\t")
                found[title] = VarValue(title, text, loc.row, loc.col, tabs)
        elif t is ast.Ref:
            visit(term.head)
            for p in term.path:
                visit(p)
        elif t is ast.Call:
            for a in term.args:
                visit(a)
        elif t is ast.Array or t is ast.SetTerm:
            for x in term.items:
                visit(x)
        elif t is ast.Object:
            for k, v in term.items:
                visit(k)
                visit(v)
        elif t is ast.TemplateString:
            for part in term.parts:
                if not isinstance(part, str):
                    visit(part)
        # comprehensions: their insides are not reported (already evaluated)

    s = expr.statement
    if type(s) is ast.Assign or type(s) is ast.Unify:
        visit(s.lhs)
        visit(s.rhs)
    elif type(s) is ast.SomeIn:
        if s.key is not None:
            visit(s.key)
        visit(s.value)
        visit(s.collection)
    elif type(s) is ast.Every:
        visit(s.domain)
    elif type(s) is not ast.SomeVars:
        visit(s)
    for w in expr.with_mods:
        visit(w.value)
    return list(found.values())


def _term_var_names(term: Any, out: set[str]) -> None:
    from pyrego.compile.safety import term_vars

    term_vars(term, out)


def _stmt_var_names(expr: ast.Expr, out: set[str]) -> None:
    from pyrego.compile.safety import stmt_vars

    stmt_vars(expr.statement, out, closures=True)


# ---------------------------------------------------------------- text


def expression_source(lines: list[str], row: int, col: int) -> str:
    """The source text of the expression starting at ``row``:``col``.

    Scans to the end of the expression: a newline, ``;`` or the body's closing
    brace outside brackets and strings; comments are dropped."""
    out: list[str] = []
    depth = 0
    r, c = row - 1, col - 1
    while r < len(lines):
        line = lines[r]
        while c < len(line):
            ch = line[c]
            if ch == "#":
                break
            if ch == '"' or ch == "`":
                end = _string_end(line, c)
                out.append(line[c:end])
                c = end
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return "".join(out).rstrip()
                depth -= 1
            elif ch == ";" and depth == 0:
                return "".join(out).rstrip()
            out.append(ch)
            c += 1
        if depth == 0:
            break
        out.append("\n")
        r, c = r + 1, 0
    return "".join(out).rstrip()


def _string_end(line: str, start: int) -> int:
    quote = line[start]
    i = start + 1
    while i < len(line):
        if line[i] == "\\" and quote == '"':
            i += 2
            continue
        if line[i] == quote:
            return i + 1
        i += 1
    return len(line)


def case_name(value: Any) -> str:
    """A case key as OPA names it: a string as it is, anything else as JSON (HTML-escaped, as Go writes it)."""
    if type(value) is str:
        return value
    from pyrego.runtime.convert import dumps

    text = dumps(thaw(value))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def truncate(text: str, width: int = MAX_VALUE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
