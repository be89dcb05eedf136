"""Checks of the refs an expression reads (OPA's ``refChecker``).

A ref into a value whose type is known must select what that type has: an
array by number, an object by one of its keys, nothing at all inside a
scalar. The errors are OPA's ``undefined ref`` with the ref, a caret under
the bad part and what was wanted::

    undefined ref: data.p.q.b
    \tdata.p.q.b
    \t         ^
    \t         have: "b"
    \t         want (one of): ["a"]

Walking a ref also types the variables used as its keys (``x[i]`` gives
``i`` the key type of ``x``).
"""

from __future__ import annotations

from functools import cmp_to_key
from typing import Any

from pyrego.ast.nodes import Scalar, Var
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import ROOT_DOCUMENTS, Node, TypeEnv, select_constant, term_key, to_json
from pyrego.typecheck.ir import CALL, TERM, IArray, ICompr, IExpr, IObject, IRef, ISet, Term, ref_text, term_text
from pyrego.typecheck.terms import TypeErr, unify1
from pyrego.typecheck.unify import unifies


def _go_len(text: str) -> int:
    """Go's len() of a string: its UTF-8 bytes."""
    return len(text.encode("utf-8"))


def _type_text(t: T.MaybeType) -> str:
    """A type as Go's ``%v`` prints it (``<nil>`` when unknown)."""
    return "<nil>" if t is None else str(t)


def _value_text(v: Any) -> str:
    """A JSON value as OPA writes the Rego value (strings quoted)."""
    import json

    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, T.JNum):
        return v.text
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, tuple):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_value_text(x)}" for k, x in v.pairs) + "}"


def _one_of_text(values: list[Any]) -> str:
    return "[" + " ".join(_value_text(v) for v in values) + "]"


def _sorted_values(values: list[Any]) -> list[Any]:
    # Rego's order on these keys (null < boolean < number < string < ...) is
    # the JSON order for the scalars a key can be.
    return sorted(values, key=cmp_to_key(T.compare_json))


def one_of_for_node(node: Node) -> list[Any]:
    out = []
    for c in node.children.values():
        if c.term is not None and type(c.term) is Scalar:
            out.append(to_json(c.term))
    return _sorted_values(out)


def one_of_for_type(tpe: T.MaybeType) -> list[Any]:
    out: list[Any] = []
    if isinstance(tpe, T.ObjectType):
        out = [k for k, _ in tpe.static]
    elif isinstance(tpe, T.AnyType):
        for m in tpe.of:
            out.extend(one_of_for_type(m))
    # Duplicates dropped by a hashable form of each key (a linear scan per key
    # was quadratic: an object with 100,000 keys took minutes to report).
    seen: dict[Any, Any] = {}
    for v in out:
        seen.setdefault(_key_identity(v), v)
    return _sorted_values(list(seen.values()))


def _key_identity(v: Any) -> Any:
    """Equal for keys ``compare_json`` finds equal and of one Python type."""
    if isinstance(v, T.JNum):
        return (T.JNum, v.value.normalize())
    if v is None or isinstance(v, (str, bool, int, float)):
        return (type(v), v)
    return (type(v), repr(v))


def _where(env: TypeEnv, ref: tuple[Term, ...]) -> Any:
    shared = env.shared
    if shared is None:
        return ref[0].location
    return shared.location(ref[0], ref[1] if len(ref) > 1 else None)


def _unsupported(env: TypeEnv, ref: tuple[Term, ...], pos: int, have: T.MaybeType) -> Any:
    text = ref_text(ref, env.names)
    lines = [text, "^" * _go_len(ref_text(ref[: pos + 1], env.names)), "have: " + _type_text(have)]
    if isinstance(have, T.FunctionType):
        # Functions are called, never read: OPA (v1.20.2) says so.
        return TypeErr(_where(env, ref), f"function {text} used as reference, not called", lines)
    return TypeErr(_where(env, ref), "undefined ref: " + text, lines)


def _invalid(env: TypeEnv, ref: tuple[Term, ...], pos: int, have: T.MaybeType, want: T.MaybeType, one_of: list[Any] | None) -> Any:
    text = ref_text(ref, env.names)
    pad = " " * (_go_len(ref_text(ref[:pos], env.names)) + 1)
    lines = [text, pad + "^"]
    if have is not None:
        lines.append(pad + "have (type): " + _type_text(have))
    else:
        lines.append(pad + "have: " + term_text(ref[pos], env.names))
    if one_of:
        lines.append(pad + "want (one of): " + _one_of_text(one_of))
    else:
        lines.append(pad + "want (type): " + _type_text(want))
    return TypeErr(_where(env, ref), "undefined ref: " + text, lines)


class RefChecker:
    """Walks one expression's terms and checks each ref against ``env``."""

    def __init__(self, env: TypeEnv) -> None:
        self.env = env
        self.errors: list[Any] = []

    def check_expr(self, e: IExpr) -> None:
        if e.kind == CALL:
            for t in e.operands:
                self.walk(t)
        elif e.kind == TERM:
            self.walk(e.term)
        else:
            # Every: OPA's walk goes on into the expression's parts and the
            # body's expressions (their refs are checked here, in this
            # environment), and into the modifiers.
            self.walk(e.every_key)
            self.walk(e.every_value)
            self.walk(e.term)
            for b in e.body:
                self.check_expr(b)
            for w in e.withs:
                self.walk(w.target)
                self.walk(w.value)

    def walk(self, t: Any) -> None:
        if t is None:
            return
        tt = type(t)
        if tt is IRef:
            head = t.head
            if type(head) is Var and head.name == "input" and not self.env.root.input_typed:
                self._input_ref(t.path)
                return
            ref = t.terms()
            err = self.check_apply(ref)
            if err is not None:
                self.errors.append(err)
                return
            err = self.check_ref(self.env, self.env.tree, ref, 0)
            if err is not None:
                self.errors.append(err)
            for x in ref:
                self.walk(x)
        elif tt is IArray or tt is ISet:
            for x in t.items:
                self.walk(x)
        elif tt is IObject:
            for k, v in t.items:
                self.walk(k)
                self.walk(v)
        # comprehensions are checked on their own; scalars and variables hold no refs

    def _input_ref(self, path: tuple[Any, ...]) -> None:
        """A ref into ``input``, which is any: no error, but its variables become any."""
        env = self.env
        nested = False
        for p in path:
            tp = type(p)
            if tp is Var:
                if env.get_by_value(p) is None:
                    env.tree.put_one(("v", p.name), p, T.ANY)
            elif tp is not Scalar:
                nested = True
                if tp is IArray or tp is IObject or tp is ISet:
                    unify1(env, p, T.ANY, False)
        if nested:
            for p in path:
                self.walk(p)

    def check_apply(self, ref: tuple[Term, ...]) -> Any:
        tpe = self.env.get_by_ref(ref)
        if isinstance(tpe, T.FunctionType):
            return _unsupported(self.env, ref, len(ref) - 1, tpe)
        return None

    def check_ref(self, curr: TypeEnv, node: Node, ref: tuple[Term, ...], idx: int) -> Any:
        env = self.env
        while idx < len(ref):
            head = ref[idx]
            if idx in (1, 2) and not (type(head) is Var or (type(head) is Scalar and isinstance(head.value, str))):
                have = env.get_by_value(head)
                return _invalid(self.env, ref, idx, have, T.STRING, one_of_for_node(node))
            if type(head) is Var and idx != 0:
                tpe = T.keys(curr.extent(node))
                exist = env.get_by_value(head)
                if exist is not None:
                    if not unifies(tpe, exist):
                        return _invalid(self.env, ref, idx, exist, tpe, one_of_for_node(node))
                else:
                    env.tree.put_one(("v", head.name), head, tpe)
            child = node.child(term_key(head))
            if child is None:
                if curr.next is not None:
                    curr = curr.next
                    node = curr.tree
                    idx = 0
                    continue
                root = ref[0]
                if type(root) is Var and root.name in ROOT_DOCUMENTS:
                    if idx != 0:
                        for c in list(node.children.values()):
                            self.check_ref(curr, c, ref, idx + 1)  # errors ignored, as in OPA
                        return None
                    return self.check_leaf(T.ANY, ref, 1)
                return self.check_leaf(T.ANY, ref, 0)
            if child.leaf:
                return self.check_leaf(child.value, ref, idx + 1)
            node = child
            idx += 1
        return None

    def check_leaf(self, tpe: T.MaybeType, ref: tuple[Term, ...], idx: int) -> Any:
        env = self.env
        while idx < len(ref):
            head: Any = ref[idx]
            keys = T.keys(tpe)
            if keys is None:
                return _unsupported(self.env, ref, idx - 1, tpe)
            th = type(head)
            if th is Var:
                exist = env.get_by_value(head)
                if exist is not None:
                    if not unifies(exist, keys):
                        return _invalid(self.env, ref, idx, exist, keys, one_of_for_type(tpe))
                else:
                    env.tree.put_one(("v", head.name), head, T.keys(tpe))
            elif th is IRef:
                exist = env.get_by_ref(head.terms())
                if exist is not None and not unifies(exist, keys):
                    return _invalid(self.env, ref, idx, exist, keys, one_of_for_type(tpe))
            elif th in (IArray, IObject, ISet):
                if not unify1(env, head, keys, False):
                    return _invalid(self.env, ref, idx, env.get_by_value(head), keys, None)
            elif th is ICompr:
                pass
            else:
                child = select_constant(tpe, head)
                if child is None:
                    return _invalid(self.env, ref, idx, None, T.keys(tpe), one_of_for_type(tpe))
                tpe = child
                idx += 1
                continue
            tpe = T.values(tpe)
            idx += 1
        return None
