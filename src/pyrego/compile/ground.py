"""Ground terms: terms with no variables, refs, calls or closures, and their
values (what the compile stages, code generation and the engine's
``set_input_term`` share)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any, NamedTuple

from pyrego.ast import nodes as ast
from pyrego.runtime.values import freeze


def is_ground(t: ast.Term) -> bool:
    """A term with no variables, refs, calls or closures."""
    node: Any = t
    tt = type(node)  # (exact types, scalars not called for: constant rules' values are long arrays)
    if tt is ast.Array or tt is ast.SetTerm:
        for x in node.items:  # (a loop: no generator to make and resume per item)
            if type(x) is not ast.Scalar and not is_ground(x):
                return False
        return True
    if tt is ast.Object:
        for k, v in node.items:
            if not (is_ground(k) and is_ground(v)):
                return False
        return True
    return tt is ast.Scalar


def ground_value(t: ast.Term) -> Any:
    """The value of a ground term (TypeError for any other)."""
    node: Any = t
    tt = type(node)
    if tt is ast.Scalar:
        return node.value
    if tt is ast.Array:
        return [x.value if type(x) is ast.Scalar else ground_value(x) for x in node.items]
    if tt is ast.SetTerm:
        return frozenset(freeze(ground_value(x)) for x in node.items)
    if tt is ast.Object:
        out: dict[Any, Any] = {}
        for k, v in node.items:
            out[freeze(ground_value(k))] = ground_value(v)
        return out
    raise TypeError("not ground")


# Where ``ast.Compare`` puts the kinds of term an object literal's key can
# be. OPA's compiler has put each local, call, comprehension and ref in a
# variable by then, numbered stage by stage (locals, then calls, then
# comprehensions, then refs): their variables sort in that order (as long
# as the numbers have as many digits), refs among themselves in their own
# order. Composites keep their rank.
_KEY_RANK: dict[type, tuple[Any, ...]] = {
    ast.TemplateString: (4,),
    ast.Var: (5, 0),
    ast.Call: (5, 1),
    ast.ArrayCompr: (5, 2),
    ast.SetCompr: (5, 2),
    ast.ObjectCompr: (5, 2),
    ast.Object: (8,),
    ast.SetTerm: (9,),
}


class KeyNames(NamedTuple):
    """OPA's names of the variables in a program's object and set literals
    (see :mod:`pyrego.codegen.key_order`): ``var`` of a variable written
    there, by its name here; ``made`` the first name OPA gives the variables
    it puts calls, comprehensions and refs in, which sort by it among the
    variables' names (after ``__local4__``, before ``__local30__`` and
    ``a``)."""

    var: Callable[[str], str]
    made: Callable[[], str]


_COMPREHENSIONS = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)
_LOCAL_KINDS = (ast.Var, ast.Call, ast.Ref, *_COMPREHENSIONS)


def _key_order(t: ast.Term, names: KeyNames | None = None) -> tuple[Any, ...]:
    if names is not None:
        if isinstance(t, ast.Var):
            return (5, names.var(t.name))
        if isinstance(t, ast.Call):
            return (5, names.made(), 1)
        if isinstance(t, _COMPREHENSIONS):
            return (5, names.made(), 2)
        if isinstance(t, ast.Ref):
            return (5, names.made(), 3, tuple(_ref_part(x) for x in (t.head, *t.path)))
    if type(t) is ast.Scalar:
        v = t.value
        if v is None:
            return (0,)
        if type(v) is bool:
            return (1, v)
        if type(v) is str:
            return (3, v)
        return (2, Decimal(v) if type(v) is int else Decimal(str(v)))
    if type(t) is ast.Array:
        return (7, tuple(_key_order(x) for x in t.items))  # (element by element, then by length)
    if type(t) is ast.Ref:
        return (6, tuple(_ref_part(x) for x in (t.head, *t.path)))
    return _KEY_RANK.get(type(t), (5, 0))


def _ref_part(t: ast.Term) -> tuple[Any, ...]:
    return (5, 0, t.name) if type(t) is ast.Var else _key_order(t)


def _names_show(keys: list[ast.Term]) -> bool:
    """Whether the names of variables decide the order of ``keys``: where a
    variable is among two or more keys that OPA's compiler makes variables
    of (else they sort by kind alone, as ``_KEY_RANK`` has it)."""
    return any(type(k) is ast.Var for k in keys) and sum(type(k) in _LOCAL_KINDS for k in keys) > 1


def in_build_order(items: tuple[tuple[ast.Term, ast.Term], ...], names: KeyNames | None = None) -> list[tuple[ast.Term, ast.Term]]:
    """The entries of an object literal in the order OPA builds the object:
    by key, sorted as ``ast.Compare`` sorts terms (constants by value, then
    variables, calls and comprehensions, each in the order of the text, then
    refs by their parts, then arrays element by element). Where two keys
    turn out equal, the later entry is the one the object keeps
    (``{input.k: 1, "a": 2}`` is ``{"a": 1}`` when ``input.k`` is ``"a"``);
    of a key written twice, only the later entry is there at all (its
    parser keeps one). ``names``: OPA's names of the variables, by which
    they sort; None: in the order of the text."""
    if names is not None and not _names_show([k for k, _ in items]):
        names = None
    kept: list[tuple[ast.Term, ast.Term]] = []
    for k, v in items:
        # (a key written twice is one entry, of the later value, before anything is evaluated)
        for i, (seen, _) in enumerate(kept):
            if seen == k and _key_order(seen) == _key_order(k):  # (true is not 1, as Python has it)
                kept[i] = (seen, v)
                break
        else:
            kept.append((k, v))
    return sorted(kept, key=lambda kv: _key_order(kv[0], names))


def iterated_terms(t: ast.Term, names: KeyNames | None = None) -> ast.Term:
    """What ``some v in t`` iterates, as OPA does it: a set or object literal
    holding variables is iterated term by term before its values are known
    (its members, or its values, in the order ``ast.Compare`` sorts its
    terms, a member that two terms turn out to share coming twice): here an
    array literal of those terms. Any other term as it is."""
    if type(t) is ast.SetTerm and not is_ground(t):
        items: list[ast.Term] = []
        for x in t.items:
            if x not in items:  # (a term written twice is one member)
                items.append(x)
        shown = names if _names_show(items) else None
        return ast.Array(tuple(sorted(items, key=lambda x: _key_order(x, shown))), t.location)
    if type(t) is ast.Object and not is_ground(t) and all(type(k) is ast.Scalar or (type(k) is ast.Var and k.name not in ("input", "data")) for k, _ in t.items):
        # (only keys that cannot be undefined: the array leaves them out)
        return ast.Array(tuple(v for _, v in in_build_order(t.items, names)), t.location)
    return t


def iterated_as_built(t: ast.Term) -> bool:
    """Whether ``some ... in t`` iterates ``t`` in the order its value was
    built, not sorted: an object literal with non-constant keys, which OPA
    iterates in the order of its key terms (see ``rt_items_built``)."""
    return type(t) is ast.Object and not is_ground(t)
