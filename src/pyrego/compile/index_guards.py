"""The tests OPA's rule index makes before a rule body runs, as guards.

OPA looks a document's rules up in its rule index (:mod:`pyrego.compile.rule_index`)
before it evaluates any of them: a definition (or ``else`` branch) whose
indexed requirements on ``input``, base ``data`` or a function's arguments do
not hold (``input.x == "a"`` with ``input.x`` another value or undefined, a
ref used as an expression undefined, a ref of the rule's head undefined, ...)
is skipped before anything in its body runs. pyrego runs a body in its own
order, so where an expression before the failing test raises (a conflict in
a rule it reads, a builtin's error with strict builtin errors), pyrego would
raise where OPA answers undefined.

:func:`index_plan` gives, for each branch of a document, the requirements
as expressions to put at the front of its body. Each is pure (a ref into
``input`` or base data, or an argument, compared with constants): it cannot
raise, and it fails only where the body would fail anyway, so a guard can
only turn an error into undefined, as OPA's skip does, never change a value.
A requirement that the body's leading expressions already test before any
expression that could raise needs no guard (the common case: ``input.role ==
"admin"`` first), so such bodies run as before. A guard needed only because
a builtin before the test can fail is marked strict-only
(:mod:`pyrego.compile.eval_order`): strict builtin errors are a setting of
the evaluation, and evaluations without them skip it.

OPA's lookup also takes a collection one of whose members is the required
value (``input.x == 1`` with ``input.x`` ``[1]``): the guards do the same.
Where a guard is looser than OPA's lookup (``x in [1, [2]]``, several
required members), it tests the value itself: the difference can only be
an error-vs-undefined one on a body that fails.

The plan also gives the order in which OPA evaluates a document's or a
function's definitions (its index's: those without indexed requirements
first; for partial sets and objects too, all of whose definitions run),
where one of them can raise: which error comes first, or whether a
definition that raises is reached at all, depends on it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Container, Iterator, NamedTuple

from pyrego.ast import nodes as ast
from pyrego.compile.base import COMPLETE, FUNCTION, PARTIAL_OBJECT, PARTIAL_SET, RuleNode, child_at, iter_rule_chain
from pyrego.compile.body_order import reorder_body
from pyrego.compile.eval_order import NEVER_FAILS, PARTS, SUBQUERIES, has_call, head_calls_first, mark_strict_only
from pyrego.compile.ground import is_ground
from pyrego.compile.opa_form import OpaForm, PieceTable
from pyrego.compile.rule_index import (
    ANY,
    IndexedRule,
    IndexRef,
    RuleIndex,
    head_value,
    never_exits_early,
    one_constant_value,
)
from pyrego.compile.safety import stmt_vars, term_vars
from pyrego.errors import RegoError
from pyrego.runtime.helpers import resolve_index_ref
from pyrego.runtime.values import BoolKey, freeze

#: Calls that never raise and read their operands only (comparisons, membership).
_PURE_CALLS = frozenset({"equal", "neq", "lt", "gt", "lte", "gte", "internal.member_2"})
_ROOTS = ("input", "data")


class IndexPlan(NamedTuple):
    """What OPA's rule index of one document changes in its code: ``guards``,
    the tests to put before branches' bodies (by ``id`` of the branch's
    rule); ``order``, the positions of its definitions in the order OPA
    evaluates them, where that differs from theirs (None: theirs)."""

    guards: dict[int, tuple[ast.Expr, ...]]
    order: tuple[int, ...] | None
    #: Expressions to put after a branch's body: its head's calls, which OPA
    #: evaluates there, before the head's refs (see _head_calls_first).
    tails: dict[int, tuple[ast.Expr, ...]] | None = None


NO_PLAN = IndexPlan({}, None)


def index_plan(
    node: RuleNode, root: RuleNode, functions: Container[str], arity: Callable[[str], int | None], strict: bool = True
) -> IndexPlan:
    """The index plan of ``node``; ``root``: the rule tree's root (for which
    data is virtual); ``functions``: the names of the program's functions.
    A guard needed only where a builtin's error raises (strict builtin
    errors, a setting of the evaluation, not of the code) is marked
    :func:`strict_only`: the code runs it only in evaluations with strict
    builtin errors. The order of a document's or a function's definitions
    is OPA's where one of them can raise: which error comes first, or
    whether a definition that raises is reached at all, depends on it
    (values do not)."""

    def is_virtual(path: tuple[str, ...]) -> bool:
        return data_is_virtual(root, path)

    raises = _Raising(root, functions, strict=False).expr

    # A program none of whose documents can conflict (no functions, no
    # objects, complete rules of one value each: most policies) needs no
    # guard without strict builtin errors: decided once per program.
    can_conflict = program_can_conflict(root)
    if not strict and not can_conflict:
        return NO_PLAN  # (nothing can raise before a test: no guard, no order, no tail)
    # (``strict``: the code serves evaluations with strict builtin errors too.)
    strict_raises = _Raising(root, functions, strict=True).expr if strict else raises
    chains = [iter_rule_chain(rule) for rule in node.rules]
    # (What can raise without strict errors can with them: one filter for both.)
    need_guards = any(_may_need_guard(b, strict_raises, is_virtual) for chain in chains for b in chain)
    # (Where definitions' values can differ, the order also decides which
    # definition a conflict is reported at: the later of the two, in OPA's
    # order; a partial object's keys can conflict. A partial set's
    # definitions all run, in that order too: it decides which error comes
    # first where one can raise.)
    body_raises = any(strict_raises(b.head) or any(strict_raises(e) for e in b.body) for chain in chains for b in chain)
    need_order = len(chains) > 1 and (body_raises or node.kind == PARTIAL_OBJECT or (node.kind != PARTIAL_SET and not one_constant_value(node)))
    tails: dict[int, tuple[ast.Expr, ...]] = {}
    for chain in chains:
        for br in chain:
            tail = head_calls_first(br.head, raises, strict)
            if tail:
                tails[id(br)] = tail
    if not need_guards and not need_order:
        # (no body can raise, or none has a test to index: skipping one changes nothing)
        return IndexPlan({}, None, tails) if tails else NO_PLAN
    index = node_index(node, root, arity)
    if index is None:
        return IndexPlan({}, None, tails)  # (a body OPA's form cannot be made of: no guards rather than wrong ones)
    order = tuple(index.order()) if need_order else None
    if order is not None and (order == tuple(range(len(chains))) or len(order) != len(chains)):
        order = None
    out: dict[int, tuple[ast.Expr, ...]] = {}
    for c, chain in enumerate(chains if need_guards else ()):
        for b, branch in enumerate(chain):
            path = index.paths.get((c, b))
            if not path:
                continue
            args = tuple(branch.head.args or ())
            # Tested before anything that can raise with strict errors, and
            # without them (a superset: fewer expressions can raise).
            tested_strict = _tested_first(branch.body, args, is_virtual, strict_raises)
            tested = _tested_first(branch.body, args, is_virtual, raises) if can_conflict else None
            fresh = iter(range(1 << 30))
            guards: list[ast.Expr] = []
            for ref, value, origin in path:
                key = (ref, _key(value))
                if key in tested_strict:
                    continue
                made = _guard(ref, value, origin, args, fresh)
                guards += made if tested is not None and key not in tested else map(mark_strict_only, made)
            if guards:
                out[id(branch)] = tuple(guards)
    return IndexPlan(out, order, tails)


class _Raising:
    """Whether an expression or a document of one program can raise (with
    ``strict``: also by a builtin's error), remembered on the tree's root (by ``id``; None
    while a document is being looked at: a cycle, which the compiler refuses
    anyway). A class, not closures calling each other, which would make a
    reference cycle per call, freed only by the cyclic collector."""

    __slots__ = ("root", "functions", "memo", "strict")

    def __init__(self, root: RuleNode, functions: Container[str], strict: bool) -> None:
        self.root = root
        self.functions = functions
        self.strict = strict
        if strict:
            memo = root.strict_raises_memo
            if memo is None:
                memo = root.strict_raises_memo = {}
        else:
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
            known = self.memo[key] = _may_raise(e, self.reads_rules, self.functions, self.strict)
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


def program_can_conflict(root: RuleNode) -> bool:
    """Whether any document of the program under ``root`` can conflict (decided
    once per program, kept in the root's memo): where none can and builtin
    errors are not strict, nothing but ``print`` makes the order of
    evaluation show."""
    memo = root.raises_memo
    if memo is None:
        memo = root.raises_memo = {}
    known = memo.get(0)
    if known is None:
        known = memo[0] = any(_may_conflict(n) for n in root.walk())
    return bool(known)


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


def guarded_rule(rule: ast.Rule, plan: IndexPlan) -> ast.Rule:
    """``rule`` (with its else chain) with each branch's guards before its body (and its tail after)."""
    guards, tails = plan.guards, plan.tails or {}
    if not guards and not tails:
        return rule
    chain = iter_rule_chain(rule)
    if not any(id(b) in guards or id(b) in tails for b in chain):
        return rule
    nxt: ast.Rule | None = None
    for branch in reversed(chain):
        body = guards.get(id(branch), ()) + tuple(branch.body) + tails.get(id(branch), ())
        nxt = ast.Rule(branch.head, body, branch.default, nxt, branch.location, branch.module_file)
    assert nxt is not None
    return nxt


def _may_need_guard(rule: ast.Rule, raises: Callable[[Any], bool], is_virtual: Callable[[tuple[str, ...]], bool]) -> bool:
    """Whether a branch has an expression that can raise, at or after which
    comes one the index could take a test from that the expressions before
    it do not make already (a quick filter, so that OPA's form of a body is
    made only where a guard may come of it: a comparison of a ref or an
    argument, or a ref not read before the first expression that can raise,
    negated or not: OPA binds a negated call's ref operands before it)."""
    args = frozenset(a.name for a in rule.head.args or () if type(a) is ast.Var)
    body = rule.body
    first = next((i for i, e in enumerate(body) if raises(e)), None)
    read: set[tuple[Any, Any]] = set()
    _note_refs(_head_terms(rule.head), is_virtual, read)  # (OPA tests the head's refs in the body, last)
    if first is None:
        # (the head's calls, evaluated after the body, before its refs, can raise where its refs are tested)
        return bool(read) and raises(rule.head) and not read <= _tested_first(body, tuple(rule.head.args or ()), is_virtual, raises)
    tested: set[tuple[Any, Any]] | None = None
    if read:
        tested = _tested_first(body, tuple(rule.head.args or ()), is_virtual, raises)
        if not read <= tested:
            return True
    for x in body[first:]:
        if x.with_mods:
            continue
        stmt = x.statement
        if type(stmt) is ast.Every:
            stmt = stmt.domain  # (OPA binds it before the loop)
        if not _mentions(stmt, args):
            continue
        if type(stmt) is ast.Unify or type(stmt) is ast.Assign or (type(stmt) is ast.Call and stmt.op in _TESTS):
            return True
        if args and not args.isdisjoint(stmt_vars(stmt, set())):
            return True
        if tested is None:
            tested = _tested_first(body, tuple(rule.head.args or ()), is_virtual, raises)
        read = set()
        _note_refs(stmt, is_virtual, read)
        if not read <= tested:
            return True
    return False


#: Calls from which the index takes a test of a value (not only of a ref being defined).
_TESTS = frozenset({"equal", "internal.member_2", "glob.match"})


def _mentions(node: Any, args: frozenset[str]) -> bool:
    """Whether ``node`` (outside comprehensions) names input, data or one of ``args``."""
    t = type(node)
    if t is ast.Var:
        return node.name in _ROOTS or node.name in args
    if t is ast.Scalar or isinstance(node, SUBQUERIES):
        return False
    if t is tuple:
        return any(_mentions(x, args) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(_mentions(getattr(node, f), args) for f in fields if f != "location")


def _holds_ref(t: Any) -> bool:
    """Whether ``t`` (a head's term) holds a ref or a comprehension: OPA evaluates it in the body."""
    if t is None or type(t) is ast.Scalar or type(t) is ast.Var:
        return False
    if type(t) is ast.Ref or isinstance(t, SUBQUERIES):
        return True
    if type(t) is ast.Call:
        return any(_holds_ref(a) for a in t.args)
    parts = PARTS.get(type(t))
    return parts is None or any(_holds_ref(x) for x in parts(t))


def _head_path_refs(head: ast.RuleHead) -> tuple[ast.Term, ...]:
    """The keys of a ref head's path that hold refs (``o[input.m[input.s]] := 1``)."""
    ref = head.ref
    if type(ref) is not ast.Ref:
        return ()
    return tuple(t for t in ref.path if t is not head.key and _holds_ref(t))


def _head_terms(head: ast.RuleHead) -> tuple[Any, ...]:
    return (head.key, head.value, *(head.ref.path if type(head.ref) is ast.Ref else ()))


def node_index(node: RuleNode, root: RuleNode, arity: Callable[[str], int | None]) -> RuleIndex | None:
    """OPA's rule index of ``node``'s definitions, made of their bodies in the
    form OPA's compiler leaves them (None where a body cannot be put in it)."""
    form = OpaForm(PieceTable(), lambda _file: None)
    indexed: list[IndexedRule] = []
    for c, rule in enumerate(node.rules):
        for b, branch in enumerate(iter_rule_chain(rule)):
            body = _opa_body(form, branch, b > 0, arity)
            if body is None:
                return None
            has, ground, value = head_value(branch)
            indexed.append(IndexedRule(c, b, body, tuple(branch.head.args or ()), node.kind in (COMPLETE, FUNCTION), has, ground, value))
    return RuleIndex(indexed, lambda path: data_is_virtual(root, path))


def early_exit_test(
    node: RuleNode, root: RuleNode, arity: Callable[[str], int | None], order: tuple[int, ...]
) -> Callable[..., tuple[tuple[int, ...], bool]] | None:
    """For a complete document or function whose definitions' values can
    differ, run in ``order`` (their source positions): OPA's index lookup
    for an evaluation's context (and a function's arguments): the positions
    in ``order`` of the definitions it finds, in the order it tries them
    (which can depend on the input), and whether it stops at the first
    value (where they all have one value). None where the index cannot be
    made, or where OPA never stops early (see never_exits_early)."""
    if never_exits_early(node):
        return None
    index = node_index(node, root, arity)
    if index is None:
        return None
    lookup = index.lookup
    position = {chain: k for k, chain in enumerate(order)}

    def found(ctx: Any, args: tuple[Any, ...] = ()) -> tuple[tuple[int, ...], bool]:
        res = lookup(lambda ref: resolve_index_ref(ctx, ref, args))
        return tuple(position[chain] for chain, _ in res.rules if chain in position), res.early_exit

    return found


def _opa_body(form: OpaForm, rule: ast.Rule, else_branch: bool, arity: Callable[[str], int | None]) -> ast.Body | None:
    """The branch's body as OPA's compiler leaves it (None where it cannot be made)."""
    head = rule.head
    path_refs = _head_path_refs(head)
    moved = path_refs or has_call(head.value) or has_call(head.key) or _holds_ref(head.value) or _holds_ref(head.key)
    if not rule.body and not moved:
        return ()  # (no test to index)
    bound: set[str] = set()
    for a in head.args or ():
        term_vars(a, bound)
    try:
        # (OPA moves the head's calls into the body, then its refs, bound to
        # variables at its end: their refs are indexed.)
        body = form.rule(rule, else_branch=else_branch).body if moved else rule.body
        body += tuple(ast.Expr(ast.Unify(form.fresh(t.location), t)) for t in path_refs)
        split = form.split(body)
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
        values = ast.Array(tuple(_scalar(v) for v in value))
        if ref[0] == "args":
            return [ast.Expr(ast.Call("internal.member_2", (term, values)))]
        # (OPA's lookup takes a collection one of whose members is among the values too.)
        item = ast.Ref(term.head, (*term.path, ast.Var(f"__index{next(fresh)}__"))) if type(term) is ast.Ref else ast.Ref(term, (ast.Var(f"__index{next(fresh)}__"),))
        same = ast.SetCompr(ast.Scalar(True), (ast.Expr(ast.Call("internal.member_2", (term, values))),))
        member = ast.SetCompr(ast.Scalar(True), (ast.Expr(ast.Call("internal.member_2", (item, values))),))
        return [ast.Expr(ast.Call("neq", (ast.Call("or", (same, member)), ast.SetTerm(()))))]
    if type(value) is tuple:
        items = tuple(ast.Var(f"__index{next(fresh)}__") if v is ANY else _scalar(v) for v in value)
        return [ast.Expr(ast.Unify(term, ast.Array(items)))]
    if ref[0] == "args":
        return [ast.Expr(ast.Call("equal", (term, _scalar(value))))]
    # OPA's lookup also takes a collection holding the value among its
    # members (``input.x == 1`` with ``input.x`` ``[1]`` or ``{"k": 1}``):
    # the body runs, and fails there.
    same = ast.SetCompr(ast.Scalar(True), (ast.Expr(ast.Call("equal", (term, _scalar(value)))),))
    member = ast.SetCompr(ast.Scalar(True), (ast.Expr(ast.Call("internal.member_2", (_scalar(value), term))),))
    return [ast.Expr(ast.Call("neq", (ast.Call("or", (same, member)), ast.SetTerm(()))))]


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


def _may_raise(e: Any, is_virtual: Callable[[tuple[str, ...]], bool], functions: Container[str], strict: bool) -> bool:
    """Whether evaluating ``e`` can raise: it calls a function, reads a
    document rules define (either can be a conflict) or has a ``with``;
    with ``strict`` (strict builtin errors), also where it calls a builtin
    that can fail. (Without strict errors a builtin's error is undefined:
    the common policies, which call builtins, then need no guards.)"""
    t = type(e)
    if t is ast.Scalar or t is ast.Var:
        return False
    if t is ast.Expr and e.with_mods:
        return True
    if t is ast.Call and (e.op in functions or e.op.startswith("data.") or strict and e.op not in NEVER_FAILS):
        return True
    if t is ast.Ref and type(e.head) is ast.Var and e.head.name == "data":
        keys: list[Any] = []
        for p in e.path:
            if type(p) is not ast.Scalar:
                return True  # (a key from a variable: it may reach any rule)
            keys.append(p.value)
        if is_virtual(tuple(keys)):
            return True
    parts = PARTS.get(t)
    if parts is not None:
        return any(_may_raise(x, is_virtual, functions, strict) for x in parts(e) if x is not None)
    if t is tuple:
        return any(_may_raise(x, is_virtual, functions, strict) for x in e)
    fields = getattr(e, "__dataclass_fields__", None)
    return fields is not None and any(_may_raise(getattr(e, f), is_virtual, functions, strict) for f in fields if f != "location")


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
    if t is ast.Scalar or isinstance(node, SUBQUERIES):
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


__all__ = ["NO_PLAN", "IndexPlan", "data_is_virtual", "guarded_rule", "index_plan"]
