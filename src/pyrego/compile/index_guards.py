"""The tests OPA's rule index makes before a rule body runs, as guards.

OPA looks a document's rules up in its rule index (:mod:`pyrego.compile.rule_index`)
before it evaluates any of them: a definition (or ``else`` branch) whose
indexed requirements on ``input``, base ``data`` or a function's arguments do
not hold (``input.x == "a"`` with ``input.x`` another value or undefined, a
ref used as an expression undefined, ...) is skipped before anything in its
body runs. pyrego runs a body in its own order, so where an expression before
the failing test raises (a conflict in a rule it reads, a strict builtin
error), pyrego would raise where OPA answers undefined.

:func:`index_guards` gives, for each branch of a document, the requirements
as expressions to put at the front of its body. Each is pure (a ref into
``input`` or base data, or an argument, compared with constants): it cannot
raise, and it fails only where the body would fail anyway, so a guard can
only turn an error into undefined, as OPA's skip does, never change a value.
A requirement that the body's leading expressions already test before any
expression that could raise needs no guard (the common case: ``input.role ==
"admin"`` first), so such bodies run as before.

Where a guard is looser than OPA's lookup (OPA matches a scalar requirement
against the members of a collection too; ``x in [...]`` against each
constant), the guard keeps OPA's exact test where it is cheap and otherwise
tests the value itself: the difference can only be an error-vs-undefined one
on a body that fails.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Container, Iterator

from pyrego.ast import nodes as ast
from pyrego.compile.base import COMPLETE, FUNCTION, PARTIAL_SET, RuleNode, child_at, iter_rule_chain
from pyrego.compile.ground import is_ground
from pyrego.compile.opa_form import OpaForm, PieceTable
from pyrego.compile.rule_index import ANY, IndexedRule, IndexRef, RuleIndex, head_value
from pyrego.compile.safety import reorder_body, stmt_vars, term_vars
from pyrego.errors import RegoError
from pyrego.runtime.values import BoolKey, freeze

#: Calls that never raise and read their operands only (comparisons, membership).
_PURE_CALLS = frozenset({"equal", "neq", "lt", "gt", "lte", "gte", "internal.member_2"})
_ROOTS = ("input", "data")


def index_guards(
    node: RuleNode, root: RuleNode, functions: Container[str], arity: Callable[[str], int | None]
) -> dict[int, tuple[ast.Expr, ...]]:
    """The guards of ``node``'s branches that need them, by ``id`` of the
    branch's rule; ``root``: the rule tree's root (for which data is virtual);
    ``functions``: the names of the program's functions."""

    def is_virtual(path: tuple[str, ...]) -> bool:
        return data_is_virtual(root, path)

    raising = _Raising(root, functions)
    raises = raising.expr
    doc_raises = raising.memo

    # A program none of whose documents can conflict (no functions, no
    # objects, complete rules of one value each: most policies) has nothing
    # for a guard to keep from raising: decided once per program.
    can_conflict = doc_raises.get(0)
    if can_conflict is None:
        can_conflict = doc_raises[0] = any(_may_conflict(n) for n in root.walk())
    if not can_conflict:
        return {}
    chains = [iter_rule_chain(rule) for rule in node.rules]
    if not any(_may_need_guard(b, raises, is_virtual) for chain in chains for b in chain):
        return {}  # (no body can raise, or none has a test to index: skipping one changes nothing)
    form = OpaForm(PieceTable(), lambda _file: None)
    indexed: list[IndexedRule] = []
    for c, chain in enumerate(chains):
        for b, branch in enumerate(chain):
            body = _opa_body(form, branch, b > 0, arity)
            if body is None:
                return {}  # (a body OPA's form cannot be made of: no guards rather than wrong ones)
            has, ground, value = head_value(branch)
            args = tuple(branch.head.args or ())
            indexed.append(IndexedRule(c, b, body, args, node.kind in (COMPLETE, FUNCTION), has, ground, value))
    index = RuleIndex(indexed, is_virtual)
    out: dict[int, tuple[ast.Expr, ...]] = {}
    for c, chain in enumerate(chains):
        for b, branch in enumerate(chain):
            path = index.paths.get((c, b))
            if not path:
                continue
            args = tuple(branch.head.args or ())
            tested = _tested_first(branch.body, args, is_virtual, raises)
            fresh = iter(range(1 << 30))
            guards = [g for ref, value, origin in path if (ref, _key(value)) not in tested for g in _guard(ref, value, origin, args, fresh)]
            if guards:
                out[id(branch)] = tuple(guards)
    return out


class _Raising:
    """Whether an expression or a document of one program can raise without
    strict builtin errors, remembered on the tree's root (by ``id``; None
    while a document is being looked at: a cycle, which the compiler refuses
    anyway). A class, not closures calling each other, which would make a
    reference cycle per call, freed only by the cyclic collector."""

    __slots__ = ("root", "functions", "memo")

    def __init__(self, root: RuleNode, functions: Container[str]) -> None:
        self.root = root
        self.functions = functions
        memo = root.raises_memo
        if memo is None:
            memo = root.raises_memo = {}
        self.memo = memo

    def node(self, n: RuleNode) -> bool:
        memo = self.memo
        if id(n) in memo:
            return memo[id(n)] or False
        memo[id(n)] = None
        result = _rules_raise(n, self.expr) or any(self.node(c) for c in n.children.values())
        memo[id(n)] = result
        return result

    def reads_rules(self, path: tuple[str, ...]) -> bool:
        root = self.root
        if not data_is_virtual(root, path):
            return False
        cur = root
        for key in path:
            if cur.has_rules():
                break
            nxt = child_at(cur, key)
            if nxt is None:
                return False
            cur = nxt
        return self.node(cur)

    def expr(self, e: Any) -> bool:
        key = id(e)  # (a body's expressions are asked again when another rule reads its document)
        known = self.memo.get(key)
        if known is None:
            known = self.memo[key] = _may_raise(e, self.reads_rules, self.functions)
        return known


def data_is_virtual(root: RuleNode, path: tuple[Any, ...]) -> bool:
    """Whether ``data.<path>`` reaches a document defined by rules (OPA does not index those)."""
    cur = root
    for key in path:
        if cur.has_rules():
            return True
        nxt = child_at(cur, key)
        if nxt is None:
            return False
        cur = nxt
    return any(n.has_rules() or n.is_package for n in cur.walk())


def _may_conflict(node: RuleNode) -> bool:
    """Whether ``node``'s definitions can give two values (a conflict)."""
    if not node.has_rules() or node.kind == PARTIAL_SET:
        return False
    if node.kind != COMPLETE:
        return True  # (objects and functions: a key or an argument can have two values)
    if len(node.rules) == 1:
        # One definition gives two values only through a variable its body
        # binds more than one way (p := x if some x in xs); a value without
        # variables (p := input.x, p := count(input.xs)) is one value.
        return any(b.head.value is None or term_vars(b.head.value, set()) for b in iter_rule_chain(node.rules[0]))
    values: set[Any] = set()
    for rule in node.rules:
        for branch in iter_rule_chain(rule):
            value = branch.head.value
            if value is None or not is_ground(value):
                return True
            values.add((type(value.value), value.value) if type(value) is ast.Scalar else value)
    return len(values) > 1


def _rules_raise(node: RuleNode, raises: Callable[[Any], bool]) -> bool:
    """Whether evaluating ``node``'s own rules can raise without strict builtin
    errors: definitions that can disagree (a conflict), or an expression of a
    body or head that can raise. Complete rules whose definitions all have
    one constant value (``allow if ...``) never conflict; partial sets never do."""
    if not node.has_rules():
        return False
    if _may_conflict(node):
        return True
    for rule in node.rules:
        for branch in iter_rule_chain(rule):
            if raises(branch.head) or any(raises(e) for e in branch.body):
                return True
    return False


def guarded_rule(rule: ast.Rule, guards: dict[int, tuple[ast.Expr, ...]]) -> ast.Rule:
    """``rule`` (with its else chain) with each branch's guards before its body."""
    if not guards:
        return rule
    chain = iter_rule_chain(rule)
    if not any(id(b) in guards for b in chain):
        return rule
    nxt: ast.Rule | None = None
    for branch in reversed(chain):
        body = guards.get(id(branch), ()) + tuple(branch.body)
        nxt = ast.Rule(branch.head, body, branch.default, nxt, branch.location, branch.module_file)
    assert nxt is not None
    return nxt


def _may_need_guard(rule: ast.Rule, raises: Callable[[ast.Expr], bool], is_virtual: Callable[[tuple[str, ...]], bool]) -> bool:
    """Whether a branch has an expression that can raise, at or after which
    comes one the index could take a test from that the expressions before
    it do not make already (a quick filter, so that OPA's form of a body is
    made only where a guard may come of it: a comparison of a ref or an
    argument, or a ref not read before the first expression that can raise)."""
    args = frozenset(a.name for a in rule.head.args or () if type(a) is ast.Var)
    body = rule.body
    first = next((i for i, e in enumerate(body) if raises(e)), None)
    if first is None:
        return False
    tested: set[tuple[Any, Any]] | None = None
    for x in body[first:]:
        if x.negated or x.with_mods:
            continue
        stmt = x.statement
        if not _mentions(stmt, args):
            continue
        if type(stmt) is ast.Unify or type(stmt) is ast.Assign or (type(stmt) is ast.Call and stmt.op in _TESTS):
            return True
        if args and not args.isdisjoint(stmt_vars(stmt, set())):
            return True
        if tested is None:
            tested = _tested_first(body, tuple(rule.head.args or ()), is_virtual, raises)
        read: set[tuple[Any, Any]] = set()
        _note_refs(stmt, is_virtual, read)
        if not read <= tested:
            return True
    return False


#: Calls from which the index takes a test of a value (not only of a ref being defined).
_TESTS = frozenset({"equal", "internal.member_2", "glob.match"})


_SUBQUERIES = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr, ast.Every)


def _mentions(node: Any, args: frozenset[str]) -> bool:
    """Whether ``node`` (outside comprehensions) names input, data or one of ``args``."""
    t = type(node)
    if t is ast.Var:
        return node.name in _ROOTS or node.name in args
    if t is ast.Scalar or isinstance(node, _SUBQUERIES):
        return False
    if t is tuple:
        return any(_mentions(x, args) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(_mentions(getattr(node, f), args) for f in fields if f != "location")


def _has_call(node: Any) -> bool:
    if type(node) is ast.Call:
        return True
    if type(node) is tuple:
        return any(_has_call(x) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(_has_call(getattr(node, f)) for f in fields if f != "location")


def _opa_body(form: OpaForm, rule: ast.Rule, else_branch: bool, arity: Callable[[str], int | None]) -> ast.Body | None:
    """The branch's body as OPA's compiler leaves it (None where it cannot be made)."""
    head_calls = _has_call(rule.head.value) or _has_call(rule.head.key)
    if not rule.body and not head_calls:
        return ()  # (no test to index)
    bound: set[str] = set()
    for a in rule.head.args or ():
        term_vars(a, bound)
    try:
        # (OPA moves the head's calls into the body: their ref operands are indexed.)
        split = form.split(form.rule(rule, else_branch=else_branch).body if head_calls else rule.body)
        own = set(bound).union(*[stmt_vars(e.statement, set()) for e in split])
        ordered, _ = reorder_body(split, set(bound), own, arity, bind_operands=False)
        return form.bind(ordered)
    except (RegoError, RecursionError):
        return None


# ---------------------------------------------------------------- guards


def _ref_term(ref: IndexRef, args: tuple[ast.Term, ...]) -> ast.Term:
    if ref[0] == "args":
        return args[ref[1]]
    head = ast.Var(ref[0])
    if len(ref) == 1:
        return head
    return ast.Ref(head, tuple(ast.Scalar(k) for k in ref[1:]))


def _scalar(value: Any) -> ast.Scalar:
    if type(value) is BoolKey:
        return ast.Scalar(value.value)
    return ast.Scalar(value)


def _guard(ref: IndexRef, value: Any, origin: str, args: tuple[ast.Term, ...], fresh: Iterator[int]) -> list[ast.Expr]:
    """The guard of one requirement: it fails only where the body's test it
    came from fails (``origin``: how the index made it, see rule_index)."""
    term = _ref_term(ref, args)
    if value is ANY:
        if ref[0] == "args":
            return []  # (an argument is always defined)
        return [ast.Expr(ast.Unify(ast.Var(f"__index{next(fresh)}__"), term))]
    if type(origin) is tuple:
        return [ast.Expr(ast.Unify(ast.Var(f"__index{next(fresh)}__"), term)), _glob_guard(term, origin[1], origin[2], value, fresh)]
    if origin == "partial":
        return []  # (``x in [1, [2]]``: the index has only some of the values)
    if origin == "member":
        if type(value) is list or type(value) is tuple:
            return []  # (several members required, or an array among them)
        # ``ref[_] = v`` / ``v in ref``: v among the members (where OPA also
        # takes a scalar ref equal to v, the body fails anyway).
        return [ast.Expr(ast.Call("internal.member_2", (_scalar(value), term)))]
    if type(value) is list:
        return [ast.Expr(ast.Call("internal.member_2", (term, ast.Array(tuple(_scalar(v) for v in value)))))]
    if type(value) is tuple:
        items = tuple(ast.Var(f"__index{next(fresh)}__") if v is ANY else _scalar(v) for v in value)
        return [ast.Expr(ast.Unify(term, ast.Array(items)))]
    return [ast.Expr(ast.Call("equal", (term, _scalar(value))))]


def _glob_guard(term: ast.Term, pattern: str, sep: str, parts: tuple[Any, ...], fresh: Iterator[int]) -> ast.Expr:
    """``glob.match(pattern, sep, ref)`` as OPA's index tests it: a string
    whose parts (split at the delimiters) match the pattern's, or an array
    that does. Where glob.match is that test (one delimiter, no escapes) it
    is used for strings; else any string passes (its body decides)."""
    strings: tuple[ast.Expr, ...] = (ast.Expr(ast.Call("is_string", (term,))),)
    if len(sep) == 1 and "\\" not in pattern:
        strings += (ast.Expr(ast.Call("glob.match", (ast.Scalar(pattern), ast.Array((ast.Scalar(sep),)), term))),)
    items = tuple(ast.Var(f"__index{next(fresh)}__") if p is ANY else ast.Scalar(p) for p in parts)
    arrays = (ast.Expr(ast.Unify(term, ast.Array(items))),)
    either = ast.Call("or", (ast.SetCompr(ast.Scalar(True), strings), ast.SetCompr(ast.Scalar(True), arrays)))
    return ast.Expr(ast.Call("neq", (either, ast.SetTerm(()))))


def _key(value: Any) -> Any:
    """A hashable form of a requirement's value (for the already-tested set)."""
    if value is ANY:
        return ANY
    if type(value) is list:
        return ("any-of", tuple(value))
    return value


# ---------------------------------------------------------------- what a body tests first


def _simple_ref(t: ast.Term, is_virtual: Callable[[tuple[str, ...]], bool]) -> tuple[Any, ...] | None:
    """``t`` as an index ref when it is a ground ref into input or base data."""
    if type(t) is ast.Var and t.name in _ROOTS:
        return (t.name,)
    if type(t) is not ast.Ref or type(t.head) is not ast.Var or t.head.name not in _ROOTS:
        return None
    keys: list[Any] = [t.head.name]
    for p in t.path:
        if type(p) is not ast.Scalar:
            return None
        keys.append(p.value)
    if keys[0] == "data" and is_virtual(tuple(keys[1:])):
        return None
    return tuple(keys)


def _constant(t: ast.Term) -> Any:
    if type(t) is ast.Scalar and (t.value is None or type(t.value) in (str, int, float, bool, Decimal)):
        return freeze(t.value)
    return _NOT_CONSTANT


_NOT_CONSTANT = object()


def _operand_ok(t: ast.Term, bound: set[str], is_virtual: Callable[[tuple[str, ...]], bool]) -> bool:
    if type(t) is ast.Scalar or _constants(t) is not None:
        return True
    if type(t) is ast.Var:
        return t.name in bound or t.name in _ROOTS and _simple_ref(t, is_virtual) is not None
    return _simple_ref(t, is_virtual) is not None


def _may_raise(e: Any, is_virtual: Callable[[tuple[str, ...]], bool], functions: Container[str]) -> bool:
    """Whether evaluating ``e`` can raise without strict builtin errors: it
    calls a function, reads a document rules define (either can be a
    conflict) or has a ``with``. (A builtin's error raises only under strict
    builtin errors; guards are not made for those, which keeps the bodies of
    the common policies, which call builtins, free of them.)"""
    t = type(e)
    if t is ast.Scalar or t is ast.Var:
        return False
    if t is ast.Expr and e.with_mods:
        return True
    if t is ast.Call and (e.op in functions or e.op.startswith("data.")):
        return True
    if t is ast.Ref and type(e.head) is ast.Var and e.head.name == "data":
        keys: list[Any] = []
        for p in e.path:
            if type(p) is not ast.Scalar:
                return True  # (a key from a variable: it may reach any rule)
            keys.append(p.value)
        if is_virtual(tuple(keys)):
            return True
    parts = _PARTS.get(t)
    if parts is not None:
        return any(_may_raise(x, is_virtual, functions) for x in parts(e) if x is not None)
    if t is tuple:
        return any(_may_raise(x, is_virtual, functions) for x in e)
    fields = getattr(e, "__dataclass_fields__", None)
    return fields is not None and any(_may_raise(getattr(e, f), is_virtual, functions) for f in fields if f != "location")


#: The parts of the common nodes, for _may_raise (a walk of every expression
#: of every rule a body reads: read by field name, not through dataclass fields).
_PARTS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    ast.Expr: lambda e: (e.statement, *e.with_mods),
    ast.Ref: lambda e: (e.head, *e.path),
    ast.Call: lambda e: e.args,
    ast.Assign: lambda e: (e.lhs, e.rhs),
    ast.Unify: lambda e: (e.lhs, e.rhs),
    ast.Array: lambda e: e.items,
    ast.SetTerm: lambda e: e.items,
    ast.Object: lambda e: tuple(x for kv in e.items for x in kv),
    ast.RuleHead: lambda e: (e.ref, e.value, e.key, *(e.args or ())),
}


def _pure_expr(e: ast.Expr, is_virtual: Callable[[tuple[str, ...]], bool]) -> bool:
    if e.with_mods:
        return False
    s = e.statement
    if type(s) is ast.Unify or type(s) is ast.Assign:
        return all(type(t) in (ast.Scalar, ast.Var) or _simple_ref(t, is_virtual) is not None for t in (s.lhs, s.rhs))
    if type(s) is ast.Call:
        return s.op in _PURE_CALLS and len(s.args) == 2 and all(
            type(t) in (ast.Scalar, ast.Var) or _simple_ref(t, is_virtual) is not None or _constants(t) is not None for t in s.args
        )
    return type(s) is ast.Scalar or _simple_ref(s, is_virtual) is not None  # type: ignore[arg-type]


def _tested_first(
    body: ast.Body, args: tuple[ast.Term, ...], is_virtual: Callable[[tuple[str, ...]], bool], raises: Callable[[ast.Expr], bool]
) -> set[tuple[Any, Any]]:
    """The requirements ``(ref, value)`` that ``body``'s expressions test
    (each fails where its requirement does not hold) before any expression
    that could raise."""
    bound: set[str] = set()
    refs_of: dict[str, tuple[Any, ...]] = {}
    for i, a in enumerate(args):
        if type(a) is ast.Var:
            bound.add(a.name)
            refs_of[a.name] = ("args", i)
    tested: set[tuple[Any, Any]] = set()

    def ref_of(t: ast.Term) -> tuple[Any, ...] | None:
        if type(t) is ast.Var and t.name not in _ROOTS:
            return refs_of.get(t.name)
        return _simple_ref(t, is_virtual)

    for e in body:
        if raises(e):
            break
        if not _pure_expr(e, is_virtual):
            # It cannot raise, and fails where a ref it reads (outside
            # comprehensions) is undefined, once its variables are bound.
            if not e.negated and not e.with_mods and stmt_vars(e.statement, set()) <= bound:
                _note_refs(e.statement, is_virtual, tested)
            continue
        s = e.statement
        if type(s) is ast.Unify or type(s) is ast.Assign:
            lhs, rhs = s.lhs, s.rhs
            if not e.negated:
                for new, other in ((lhs, rhs), (rhs, lhs)):
                    if type(new) is ast.Var and new.name not in _ROOTS and new.name not in bound and _operand_ok(other, bound, is_virtual):
                        bound.add(new.name)
                        r = ref_of(other)
                        if r is not None:
                            refs_of[new.name] = r
                            tested.add((r, ANY))
                        break
                else:
                    if _operand_ok(lhs, bound, is_virtual) and _operand_ok(rhs, bound, is_virtual):
                        _note_equal(lhs, rhs, ref_of, tested)
            continue
        operands = s.args if type(s) is ast.Call else (s,)
        if e.negated or not all(_operand_ok(t, bound, is_virtual) for t in operands):  # type: ignore[arg-type]
            continue
        for t in operands:  # type: ignore[union-attr]
            r = ref_of(t)  # type: ignore[arg-type]
            if r is not None:
                tested.add((r, ANY))
        if type(s) is ast.Call and s.op == "equal":
            _note_equal(s.args[0], s.args[1], ref_of, tested)
        elif type(s) is ast.Call and s.op == "internal.member_2":
            r, consts = ref_of(s.args[0]), _constants(s.args[1])
            if r is not None and consts is not None:
                tested.add((r, ("any-of", consts)))
    return tested


def _note_refs(node: Any, is_virtual: Callable[[tuple[str, ...]], bool], tested: set[tuple[Any, Any]]) -> None:
    """Add each input or base data ref ``node`` reads (outside subqueries), and its prefixes, as defined."""
    t = type(node)
    if t is ast.Scalar or isinstance(node, _SUBQUERIES):
        return
    if t is ast.Var and node.name in _ROOTS:
        tested.add(((node.name,), ANY))
        return
    if t is ast.Ref and type(node.head) is ast.Var and node.head.name in _ROOTS:
        keys: list[Any] = [node.head.name]
        tested.add((tuple(keys), ANY))
        for p in node.path:
            if type(p) is not ast.Scalar:
                break
            keys.append(p.value)
            if keys[0] == "data" and is_virtual(tuple(keys[1:])):
                break
            tested.add((tuple(keys), ANY))
    if t is tuple:
        for x in node:
            _note_refs(x, is_virtual, tested)
        return
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is not None:
        for f in fields:
            if f != "location":
                _note_refs(getattr(node, f), is_virtual, tested)


def _constants(t: ast.Term) -> tuple[Any, ...] | None:
    """The members of a constant array or set of scalars, in order (as the index has them)."""
    if type(t) is not ast.Array and type(t) is not ast.SetTerm:
        return None
    out = [_constant(x) for x in t.items]
    return None if any(c is _NOT_CONSTANT for c in out) else tuple(out)


def _note_equal(a: ast.Term, b: ast.Term, ref_of: Callable[[ast.Term], Any], tested: set[tuple[Any, Any]]) -> None:
    for x, y in ((a, b), (b, a)):
        r = ref_of(x)
        if r is None:
            continue
        tested.add((r, ANY))
        c = _constant(y)
        if c is not _NOT_CONSTANT:
            tested.add((r, c))


__all__ = ["data_is_virtual", "guarded_rule", "index_guards"]
