"""Writing a generated function's lines, in either code form (see codegen_tiers).

In the canonical shapes every lookup, call and test is a statement of its
own: codegen_tiers expands them into the fast form. The compact form, written
for a policy's first evaluations, where Python's :func:`compile` costs more
than running the code, has fewer statements: a test (``if <cond>: <fail>``)
takes in the assignment just before it when ``<cond>`` evaluates the assigned
name first (``if (t4 := rt_dget(t2, 'k')) != 'v': ...``, or without the name
where that is its only use), and joins the test before it when both abandon
the solution the same way (``if a or b: continue``). Either way every
expression runs exactly when it ran before: a test that holds leaves the code
that follows it.
"""

from __future__ import annotations

import re

#: What may come before a name in a condition for it to be the first thing
#: evaluated there, apart from loading names: ``not``, parentheses, the
#: opening of calls, names as earlier arguments. (Generated conditions hold
#: policy text only inside literals, which this cannot match across.)
_EVALUATED_FIRST = re.compile(r"(?:not |\(|\w+\(|\w+, )*")
_NAME = re.compile(r"[A-Za-z_]\w*")

#: Tests joined into one condition at most (``if a or b or ...``): a body of
#: thousands of tests must not become one line that grows with each test.
_MOST_JOINED_TESTS = 16



class LineWriter:
    """The lines of one generated function."""

    def __init__(self, indent: int, compact: bool) -> None:
        self.lines: list[str] = []
        self.indent = indent
        # The statement that abandons the current solution (codegen_body).
        self.fail = "return UNDEF"
        self.compact = compact
        # Where the last line written may join the next test (compact form):
        # a test (indent, fail, condition), or an assignment (indent, name,
        # value, the test before it).
        self._test: tuple[int, str, str] | None = None
        self._assignment: tuple[int, str, str, tuple[int, str, str] | None] | None = None
        # Names folded into tests as ``(name := value)``: (line, offset, name, value).
        self._folds: list[tuple[int, int, str, str]] = []

    def w(self, code: str) -> None:
        self.lines.append("    " * self.indent + code)
        self._test = self._assignment = None

    def assign(self, name: str, value: str) -> None:
        """``name = value``: ``name`` a generated name, ``value`` a call or an
        attribute (a primary expression: it can take the place of ``name``)."""
        test = self._test
        self.lines.append(f"{'    ' * self.indent}{name} = {value}")
        self._test = None
        self._assignment = (self.indent, name, value, test) if self.compact else None

    def guard(self, cond: str) -> None:
        """``if cond: <fail>``."""
        indent, fail, lines = self.indent, self.fail, self.lines
        if not self.compact:
            lines.append(f"{'    ' * indent}if {cond}: {fail}")
            self._test = self._assignment = None
            return
        test = self._test
        assignment = self._assignment
        at = -1
        if assignment is not None and assignment[0] == indent:
            _, name, value, before = assignment
            at = cond.find(name)
            end = at + len(name)
            if at >= 0:
                after = cond[end : end + 1]
                if after.isalnum() or after == "_" or (at > 0 and _EVALUATED_FIRST.fullmatch(cond, 0, at) is None):
                    at = -1  # a longer name, or not what ``cond`` evaluates first
            if at >= 0:
                lines.pop()
                cond = f"{cond[:at]}({name} := {value}){cond[end:]}"
                test = before
        if test is not None and test[0] == indent and test[1] == fail and test[2].count(" or ") < _MOST_JOINED_TESTS:
            lines.pop()
            cond = f"{test[2]} or {cond}"
            if at >= 0:
                at += len(test[2]) + 4
        lines.append(f"{'    ' * indent}if {cond}: {fail}")
        if at >= 0:
            self._folds.append((len(lines) - 1, 4 * indent + 3 + at, name, value))
        # A condition holding a conditional expression could not take ``or``
        # after it; generated conditions have none, but make sure.
        self._test = (indent, fail, cond) if " if " not in cond else None
        self._assignment = None

    def end_block(self) -> None:
        """The block just written ends: what follows joins nothing in it."""
        self._test = self._assignment = None

    def returns(self, value: str) -> None:
        """``return value``; in the compact form, after a test that returns
        UNDEF at the same level, one ``return UNDEF if <cond> else value``."""
        test = self._test
        if test is None or test[0] != self.indent or test[1] != "return UNDEF":
            self.w(f"return {value}")
            return
        line = self.lines.pop()
        pad = "    " * self.indent
        self.lines.append(f"{pad}return UNDEF if {test[2]} else {value}")
        # The condition now starts further into its line.
        index = len(self.lines) - 1
        self._folds = [(i, at + 13 if i == index else at, name, value) for i, at, name, value in self._folds]
        assert line == f"{pad}if {test[2]}: return UNDEF"
        self._test = self._assignment = None

    def lone_test(self, start: int, before: tuple[int, str, str] | None) -> str | None:
        """In the compact form, where the lines from ``start`` on are a flag's
        assignment, a block's header and one test: remove them and return the
        test's condition (names folded into it keep their ``:=``). ``before``:
        what :meth:`last_test` said before ``start``."""
        test = self._test
        if not self.compact or test is None or len(self.lines) != start + 3:
            return None
        del self.lines[start:]
        self._folds = [fold for fold in self._folds if fold[0] < start]
        self._test, self._assignment = before, None
        return test[2]

    def last_test(self) -> tuple[int, str, str] | None:
        """The test on the last line written, if it is one (for :meth:`lone_test`)."""
        return self._test

    def finish(self) -> None:
        """Call once the function's lines are written: a name folded into a
        test that is used nowhere else loses its ``:=``."""
        folds = self._folds
        if not folds:
            return
        # Every name's uses, counted once for all folds (a count per fold
        # would make long bodies quadratic).
        uses: dict[str, int] = {}
        for word in _NAME.findall("\n".join(self.lines)):
            uses[word] = uses.get(word, 0) + 1
        lines = self.lines
        # Last first: dropping a name from a line moves what follows it there.
        for index, at, name, value in reversed(folds):
            # Only in ``(name := value)`` itself: that test was its one use
            # (literals can only add to the count).
            if uses.get(name, 0) == 1:
                line = lines[index]
                plain = value if value[-1] == ")" else f"({value})"
                lines[index] = line[:at] + plain + line[at + len(name) + len(value) + 6 :]
        self._folds = []


__all__ = ["LineWriter"]
