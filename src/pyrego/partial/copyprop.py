"""Copy propagation of residual queries (OPA's ``topdown/copypropagation``).

Partial evaluation saves ``x = input.tickets.a`` and then ``x > 3``; copy
propagation removes the intermediate variable: ``input.tickets.a > 3``.
The algorithm is OPA's, so the residual queries have its shapes:

1. variables equal to each other (``x = y``) or to a constant form sets
   (union-find); each variable is replaced by its set's constant, or its
   set's representative (a live variable where there is one);
2. an equality binding a non-live variable to a ref or call is removed and
   the variable replaced by that ref or call wherever it is read (not in
   negated expressions unless the value is ground);
3. live variables get an equality binding them; a removed equality is put
   back when its variable is needed for safety or when its value appears
   nowhere else (``x = input.tickets.a`` alone still requires the value to
   exist).
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.safety import term_vars as term_vars_no_closures  # (closure bodies not read)
from pyrego.partial.terms import Known, term_vars

ROOTS = ("input", "data")


class _Root:
    __slots__ = ("key", "constant")

    def __init__(self, key: str) -> None:
        self.key = key
        self.constant: Known | None = None

    def value(self) -> Any:
        return self.constant if self.constant is not None else ast.Var(self.key)


class _UnionFind:
    def __init__(self, live: set[str]) -> None:
        self.live = live
        self.parents: dict[str, str] = {}
        self.roots: dict[str, _Root] = {}

    def make_set(self, v: str) -> _Root:
        root = self.find(v)
        if root is not None:
            return root
        root = self.roots[v] = _Root(v)
        self.parents[v] = v
        return root

    def find(self, v: str) -> _Root | None:
        parent = self.parents.get(v)
        if parent is None:
            return None
        if parent == v:
            return self.roots.get(v)
        return self.find(parent)

    def merge(self, a: str, b: str) -> bool:
        r1, r2 = self.make_set(a), self.make_set(b)
        if r1 is r2:
            return True
        if r1.key not in self.live:
            r1, r2 = r2, r1
        self.parents[r2.key] = r1.key
        del self.roots[r2.key]
        if r1.constant is not None and r2.constant is not None and not (r1.constant == r2.constant):
            return False
        if r1.constant is None:
            r1.constant = r2.constant
        return True


def copy_propagate(
    query: list[ast.Expr], live: set[str], *, ensure_non_empty: bool = False, arity: Callable[[str], int | None] | None = None
) -> list[ast.Expr]:
    """``query`` with intermediate variables removed; ``live`` variables are kept bound."""
    live = set(live) | set(ROOTS)
    uf = _disjoint_sets(live, query)
    if uf is None:
        return list(query)
    headvars: set[str] = set()
    for e in query:
        for ref in _refs_of_expr(e):
            head = ref.head
            if type(head) is ast.Var:
                root = uf.find(head.name)
                if root is not None:
                    root.constant = None
                    headvars.add(root.key)
                else:
                    headvars.add(head.name)
    removed: dict[str, Any] = {}
    result: list[ast.Expr] = []
    counter = [0]
    for e in query:
        e = _plug_expr(e, uf, removed)
        if _update(e, removed, live, counter):
            result.append(e)
    for v in sorted(live - set(ROOTS)):
        root = uf.find(v)
        if root is None:
            continue
        if root.constant is not None:
            result.append(_eq(ast.Var(v), root.constant))
        elif root.key in removed:
            result.append(_eq(ast.Var(v), removed[root.key]))
        elif root.key != v:
            result.append(_eq(ast.Var(v), ast.Var(root.key)))
    safe = set(live)
    safe |= _output_vars(result, safe)
    unsafe = _body_vars(result) - safe
    for k in sorted(removed, reverse=True):
        v = removed[k]
        eq = _eq(ast.Var(k), v)
        outputs = _output_vars([eq], safe)
        provides = bool(unsafe & outputs)
        if provides:
            unsafe -= outputs
        safevar_ref = type(v) is ast.Ref and not v.path and type(v.head) is ast.Var and v.head.name in safe
        if type(v) is ast.Var and v.name in safe:
            safevar_ref = True
        if provides or (not safevar_ref and not _contained_in(v, result)):
            result.append(eq)
            safe |= outputs
    if unsafe:
        return list(query)
    if ensure_non_empty and not result:
        result.append(ast.Expr(Known(True)))  # type: ignore[arg-type]
    return result


def _eq(a: Any, b: Any) -> ast.Expr:
    return ast.Expr(ast.Unify(a, b))


def _disjoint_sets(live: set[str], query: list[ast.Expr]) -> _UnionFind | None:
    uf = _UnionFind(live)
    for e in query:
        s = e.statement
        if type(s) is not ast.Unify or e.negated or e.with_mods:
            continue
        a: Any = s.lhs
        b: Any = s.rhs
        va, vb = type(a) is ast.Var and a.name not in ROOTS, type(b) is ast.Var and b.name not in ROOTS
        if va and vb:
            if not uf.merge(a.name, b.name):
                return None
        elif va and type(b) is Known:
            root = uf.make_set(a.name)
            if root.constant is not None and not (root.constant == b):
                return None
            root.constant = b
        elif vb and type(a) is Known:
            root = uf.make_set(b.name)
            if root.constant is not None and not (root.constant == a):
                return None
            root.constant = a
    return uf


# -- plugging -------------------------------------------------------------------------------


def _plug_expr(e: ast.Expr, uf: _UnionFind, removed: dict[str, Any]) -> ast.Expr:
    neg = e.negated

    def var(v: Any) -> Any:
        if v.name in ROOTS:
            return v
        root = uf.find(v.name)
        result: Any = root.value() if root is not None else v
        if type(result) is not ast.Var:
            return result
        b = removed.get(result.name)
        if b is None:
            return result
        if neg and not _ground(b):
            return result
        if type(b) is ast.Ref and result.name in _ref_output_vars(b):
            return result
        return b

    def ref(r: ast.Ref) -> Any:
        head = r.head
        if type(head) is ast.Var and head.name not in ROOTS:
            root = uf.find(head.name)
            if root is not None:
                head = root.value()
            if type(head) is ast.Var:
                b = removed.get(head.name)
                if b is not None and (not neg or _ground(b)):
                    path = tuple(term(p) for p in r.path)
                    if type(b) is ast.Ref:
                        return ast.Ref(b.head, b.path + path, r.location)
                    return ast.Ref(b, path, r.location)
        return ast.Ref(term(head) if type(head) is not ast.Var else head, tuple(term(p) for p in r.path), r.location)

    def term(t: Any) -> Any:
        tt = type(t)
        if tt is ast.Var:
            return var(t)
        if tt is ast.Ref:
            return ref(t)
        if tt is ast.Call:
            return ast.Call(t.op, tuple(term(a) for a in t.args), t.location, t.op_ref)
        if tt is ast.Array or tt is ast.SetTerm:
            return tt(tuple(term(x) for x in t.items), t.location)
        if tt is ast.Object:
            return ast.Object(tuple((term(k), term(v)) for k, v in t.items), t.location)
        return t

    s = e.statement
    st = type(s)
    if st is ast.Unify:
        stmt: Any = ast.Unify(term(s.lhs), term(s.rhs), s.location)  # type: ignore[union-attr]
    elif st in (ast.Every, ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr):
        stmt = s
    else:
        stmt = term(s)
    withs = tuple(ast.With(w.target, term(w.value), w.location) for w in e.with_mods)
    return ast.Expr(stmt, e.negated, withs, e.location)


def _update(e: ast.Expr, removed: dict[str, Any], live: set[str], counter: list[int]) -> bool:
    """False when the expression is removed (its binding recorded in ``removed``)."""
    if e.negated or e.with_mods:
        return True
    s = e.statement
    if type(s) is ast.Unify:
        a, b = s.lhs, s.rhs
        if a == b:
            if type(a) is ast.Ref and type(a.head) is ast.Var and a.head.name in live:
                removed[f"__localcp{counter[0]}__"] = a
                counter[0] += 1
            return False
        for x, y in ((a, b), (b, a)):
            if type(x) is ast.Var and x.name not in live and type(y) in (ast.Ref, ast.Call):
                removed[x.name] = y
                return False
        return True
    return not _is_noop(e)


def _is_noop(e: ast.Expr) -> bool:
    s = e.statement
    if type(s) is Known:
        return s.value is not False
    if type(s) is ast.Call and s.op == "equal" and len(s.args) == 2:
        return s.args[0] == s.args[1]
    return False


# -- analysis -------------------------------------------------------------------------------


def _ground(t: Any) -> bool:
    """OPA's IsGround: no variables (a ref's head does not count)."""
    tt = type(t)
    if tt is Known:
        return True
    if tt is ast.Var:
        return t.name in ROOTS
    if tt is ast.Ref:
        return all(_ground(p) for p in t.path)
    if tt is ast.Call:
        return all(_ground(a) for a in t.args)
    if tt in (ast.Array, ast.SetTerm):
        return all(_ground(x) for x in t.items)
    if tt is ast.Object:
        return all(_ground(k) and _ground(v) for k, v in t.items)
    return not term_vars(t, set())


def _ref_output_vars(r: ast.Ref) -> set[str]:
    out: set[str] = set()
    for p in r.path:
        if type(p) is ast.Var:
            out.add(p.name)
    return out


def _refs_of_expr(e: ast.Expr) -> list[ast.Ref]:
    out: list[ast.Ref] = []

    def walk(t: Any) -> None:
        tt = type(t)
        if tt is ast.Ref:
            out.append(t)
            walk(t.head)
            for p in t.path:
                walk(p)
        elif tt is ast.Call:
            for a in t.args:
                walk(a)
        elif tt in (ast.Array, ast.SetTerm):
            for x in t.items:
                walk(x)
        elif tt is ast.Object:
            for k, v in t.items:
                walk(k)
                walk(v)

    s = e.statement
    if type(s) is ast.Unify:
        walk(s.lhs)
        walk(s.rhs)
    else:
        walk(s)
    return out


def _expr_vars(e: ast.Expr) -> set[str]:
    out: set[str] = set()
    s = e.statement
    if type(s) is ast.Unify:
        term_vars_no_closures(s.lhs, out)
        term_vars_no_closures(s.rhs, out)
    elif type(s) is not ast.Every:
        term_vars_no_closures(s, out)  # type: ignore[arg-type]  # (residual statements are terms or unifications)
    for w in e.with_mods:
        term_vars_no_closures(w.value, out)
    return out


def _body_vars(body: list[ast.Expr]) -> set[str]:
    out: set[str] = set()
    for e in body:
        out |= _expr_vars(e)
    return out


def _output_vars(body: list[ast.Expr], safe: set[str]) -> set[str]:
    """Variables the expressions bind, given ``safe`` (a fixpoint, as OPA's safety check)."""
    known = set(safe)
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for e in body:
            if e.negated:
                continue
            got: set[str] = set()
            s = e.statement
            if type(s) is ast.Unify:
                lv: set[str] = set()
                rv: set[str] = set()
                term_vars_no_closures(s.lhs, lv)
                term_vars_no_closures(s.rhs, rv)
                if rv <= known:
                    got |= _pattern_vars(s.lhs)
                if lv <= known:
                    got |= _pattern_vars(s.rhs)
            for ref in _refs_of_expr(e):
                head = ref.head
                if type(head) is ast.Var and (head.name in ROOTS or head.name in known):
                    got |= _ref_output_vars(ref)
            new = got - known
            if new:
                known |= new
                out |= new
                changed = True
    return out


def _pattern_vars(t: Any) -> set[str]:
    out: set[str] = set()
    tt = type(t)
    if tt is ast.Var:
        if t.name not in ROOTS:
            out.add(t.name)
    elif tt in (ast.Array, ast.SetTerm):
        for x in t.items:
            out |= _pattern_vars(x)
    elif tt is ast.Object:
        for _, v in t.items:
            out |= _pattern_vars(v)
    return out


def _contained_in(value: Any, body: list[ast.Expr]) -> bool:
    found = False

    def walk(t: Any) -> None:
        nonlocal found
        if found:
            return
        tt = type(t)
        if tt is ast.Ref:
            if type(value) is ast.Ref:
                if t.head == value.head and t.path[: len(value.path)] == value.path:
                    found = True
                    return
            elif t == value:
                found = True
                return
            walk(t.head)
            for p in t.path:
                walk(p)
            return
        if t == value:
            found = True
            return
        if tt is ast.Call:
            for a in t.args:
                walk(a)
        elif tt in (ast.Array, ast.SetTerm):
            for x in t.items:
                walk(x)
        elif tt is ast.Object:
            for k, v in t.items:
                walk(k)
                walk(v)

    for e in body:
        s = e.statement
        if type(s) is ast.Unify:
            walk(s.lhs)
            walk(s.rhs)
        elif type(s) is ast.Every:
            walk(s.domain)
        else:
            walk(s)
    return found
