"""Virtual documents made of several rules' parts, at run time.

A document under ``data`` may be defined by rules at several levels of the
rule tree: ``deny[u].reason := ...`` (rules at ``deny`` whose keys are
variables) beside ``deny.root.audit := ...`` (a rule deeper down). OPA's
document is the union of what every such rule defines: objects merge key by
key, sets merge member by member, and two different values for one key are
a conflict (``eval_conflict_error``).

The helpers here merge such parts without changing any of them (each may be
a rule's memoised value, or the caller's data), and read documents below a
computed key one child at a time (``data.t[name].deny`` evaluates ``deny``
of the one package ``t[name]``, never the whole package).
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any, Callable

from pyrego.errors import EvalConflictError, Location
from pyrego.runtime.context import EvalContext
from pyrego.runtime.helpers import MISS, VALUES, ReadPath, rt_get, rt_tree_order
from pyrego.runtime.values import UNDEF, compare, equal, freeze, thaw


def own_key(node_id: int) -> str:
    """The ``ctx.cache`` key of the own part of rule node ``node_id`` (the part
    its rules with variable keys define; a string never clashes with the rule
    documents' int keys)."""
    return f"P{node_id}"


Depths = tuple[int, ...]


@functools.lru_cache(maxsize=256)
def below(depths: Depths) -> Depths:
    """Leaf depths one level down."""
    return tuple([d - 1 for d in depths if d > 0])


def _leaf(value: Any, depths: Depths, given: set[int] | None) -> bool:
    """Whether ``value`` is a value a rule gave (not an object that rules'
    paths made): ``given`` holds the ids of the objects rules gave where known
    (see helpers.VALUES), else the document's leaves are at ``depths`` below ``value``."""
    if type(value) is not dict:
        return True
    return id(value) in given if given is not None else depths == (0,)


def rt_doc_merge(
    a: Any, b: Any, da: Depths, db: Depths, location: Location | None, ma: set[int] | None = None, mb: set[int] | None = None
) -> Any:
    """The union of two parts of one document, ``a`` defined by rules above
    ``b``'s, whose rules give values at ``da`` and ``db`` levels below them
    (``ma``, ``mb``: the objects their rules gave, where known): ``a``
    and ``b`` unchanged (a new object or set where both hold one), UNDEF
    standing for no part.

    As in OPA: objects that rules' paths make merge key by key; two values
    rules give at one place must be equal (sets merge); a value of ``a``'s
    where ``b`` goes deeper is a conflict, and a value of ``b``'s where ``a``
    goes deeper must equal all ``a`` has there."""
    if a is UNDEF:
        return b
    if b is UNDEF:
        return a
    la, lb = _leaf(a, da, ma), _leaf(b, db, mb)
    if lb:
        if la and type(a) is set and type(b) is set:
            return a | b
        if equal(a, b):
            return b
    elif not la:
        out = dict(a)
        da, db = below(da), below(db)
        for k, v in b.items():
            old = out.get(k, UNDEF)
            out[k] = v if old is UNDEF else rt_doc_merge(old, v, da, db, location, ma, mb)
        return out
    raise EvalConflictError("object keys must be unique", location)


def rt_doc_put(acc: dict[Any, Any], key: str, value: Any, da: Depths, db: Depths, location: Location | None) -> None:
    """Add the document ``value`` of deeper rules under ``key`` of ``acc`` (a
    partial object being built, which ``acc`` alone may change; ``da``, ``db``:
    as for :func:`rt_doc_merge`, for ``acc[key]`` and ``value``)."""
    if value is UNDEF:
        return
    old = acc.get(key, UNDEF)
    acc[key] = value if old is UNDEF else rt_doc_merge(old, value, da, db, location, acc.get(VALUES))


def rt_path(value: Any, path: tuple[str, ...]) -> Any:
    """``value.p1.p2...`` through objects only, or UNDEF."""
    for p in path:
        if type(value) is not dict:
            return UNDEF
        value = value.get(p, UNDEF)
        if value is UNDEF:
            return UNDEF
    return value


def _base_walk(value: Any, keys: tuple[str, ...]) -> Any:
    """Base data along string ``keys`` (an array's item by a key that reads as an index)."""
    from pyrego.runtime.helpers import rt_data_get

    for k in keys:
        value = rt_data_get(value, k)
        if value is UNDEF:
            return UNDEF
    return value


def _part(value: Any, keys: tuple[str, ...], depths: Depths) -> tuple[Any, Depths, bool, set[int] | None]:
    """``value`` along ``keys``: the value there, its leaf depths, whether the
    walk went past a value a rule gave (into it, or where it holds nothing),
    and the objects its rules gave (an own part's, see helpers.VALUES)."""
    past = False
    made = value.get(VALUES) if type(value) is dict else None
    top = True
    for k in keys:
        if value is UNDEF:
            break
        if not past and _leaf(value, depths, None if top else made):
            past = True
        value = value.get(k, UNDEF) if type(value) is dict else UNDEF
        depths = below(depths)
        top = False
    return value, depths, past, made


#: A part of a document: its function's name ("" for base data), the keys
#: to walk in its value, and the depths of its leaves.
Part = tuple[str, tuple[str, ...], Depths]


def ground_document(namespace: dict[str, Any], parts: tuple[Part, ...], location: Location | None) -> Callable[[EvalContext], Any]:
    """``data.<path>`` for a path of string keys, as the union of ``parts``
    (each function looked up at each call: a hot program replaces it)."""

    if len(parts) == 1:
        ((name, keys, _depths),) = parts
        if not name:

            def base_document(ctx: EvalContext, keys: tuple[str, ...] = keys) -> Any:
                return _base_walk(ctx.data, keys)

            return base_document

    def document(ctx: EvalContext, namespace: dict[str, Any] = namespace, parts: Any = parts, location: Any = location) -> Any:
        found: list[tuple[Any, Depths, bool, set[int] | None]] = []
        for name, keys, depths in parts:
            if not name:
                found.append((_base_walk(ctx.data, keys), (), False, None))
            else:
                found.append(_part(namespace[name](ctx), keys, depths))
        if any(past for _, _, past, _ in found):
            # Inside a value a rule gave: any other part here is a conflict.
            inside = [v for v, _, past, _ in found if past and v is not UNDEF]
            if any(v is not UNDEF for v, _, past, _ in found if not past):
                raise EvalConflictError("object keys must be unique", location)
            found = [(v, (), False, None) for v in inside]
        r: Any = UNDEF
        dr: Depths = ()
        mr: set[int] | None = None
        for v, dv, _, mv in found:
            if v is UNDEF:
                continue
            if r is UNDEF:
                r, dr, mr = v, dv, mv
            else:
                # (a merged object is none of the parts': from here on, by levels)
                r, mr = rt_doc_merge(r, v, dr, dv, location, mr, mv), None
                dr = tuple(sorted(set(dr) | set(dv)))
        return r

    return document


def pruned_document(
    namespace: dict[str, Any], path: tuple[str, ...], entries: tuple[tuple[str, str], ...]
) -> Callable[[EvalContext], Any]:
    """The document at ``path`` (with no rules of its own) as part of one that
    rules above define: base data there, and each child's part (``entries``:
    child name, its function's name), with no empty object where no rule
    defines anything; UNDEF for none."""

    def document(ctx: EvalContext, namespace: dict[str, Any] = namespace, path: Any = path, entries: Any = entries) -> Any:
        base = rt_path(ctx.data, path)
        r = dict(base) if type(base) is dict else {}
        for name, fn in entries:
            v = namespace[fn](ctx)
            if v is not UNDEF:
                r[name] = v
        if type(base) is dict and base:
            rt_tree_order(ctx, r, base)
        return r if r else UNDEF

    return document


def nonempty_part(namespace: dict[str, Any], name: str) -> Callable[[EvalContext], Any]:
    """A partial set's or object's document ``name`` as part of one that rules
    above define: UNDEF where its rules define nothing (OPA makes no key there)."""

    def part(ctx: EvalContext, namespace: dict[str, Any] = namespace, name: str = name) -> Any:
        v = namespace[name](ctx)
        return v if v else UNDEF

    return part


#: The key of the system document: the whole root document read or iterated
#: leaves out base data under it, and a whole read the rules under it too (OPA).
SYSTEM_KEY = "system"


def rt_root_base(data: Any) -> Any:
    """Base data as the root document ``data`` shows it, read whole or
    iterated: without its ``system`` key."""
    if type(data) is dict and SYSTEM_KEY in data:
        return {k: v for k, v in data.items() if k != SYSTEM_KEY}
    return data


def rt_with_system(ctx: EvalContext, doc: Any, system: Any) -> Any:
    """The root document ``doc`` as a ref iterating its keys sees it: with the
    document of the rules under ``system`` (evaluated when iterated, as OPA's
    rule tree does), ordered as the rule tree's children are."""
    if system is UNDEF:
        return doc
    r = dict(doc) if type(doc) is dict else {}
    r[SYSTEM_KEY] = system
    base = rt_root_base(ctx.data)
    if type(base) is dict and base:
        rt_tree_order(ctx, r, base)
    return r


def _child_key(key: Any) -> Any:
    """A computed key as base data's objects hold it (an integer matches its string form)."""
    if type(key) is int:
        return str(key)
    return key if type(key) is str else freeze(key)


def rt_node_child_path(
    ctx: EvalContext, table: dict[str, Callable[[EvalContext], Any]], key: Any, base_path: tuple[str, ...], keys: tuple[str, ...]
) -> Any:
    """``data.<node>[key].<keys>`` for a computed ``key``: only that document of
    the child ``key`` is evaluated (``table``: child name -> its reader)."""
    fn = table.get(key if type(key) is str else _table_key(key))
    if fn is not None:
        return fn(ctx)
    base = rt_path(ctx.data, base_path)
    if type(base) is not dict:
        return UNDEF
    return _base_walk(base.get(_child_key(key), UNDEF), keys)


def rt_node_project(
    ctx: EvalContext, table: dict[str, Callable[[EvalContext], Any]], base_path: tuple[str, ...], keys: tuple[str, ...]
) -> dict[Any, Any]:
    """``{k: data.<node>[k].<keys>}`` for every child ``k`` where it is defined,
    to iterate ``data.<node>[k].<keys>`` over ``k`` evaluating only those documents."""
    out: dict[Any, Any] = {}
    base = rt_path(ctx.data, base_path) if base_path else rt_root_base(ctx.data)
    # (a function's other keys, a[1].x, are children too: not sorted among strings)
    names = sorted(table) if all(type(k) is str for k in table) else list(table)
    if type(base) is dict:
        names += [k for k in base if type(k) is not str or k not in table]
    for name in names:
        fn = table.get(name)
        v = fn(ctx) if fn is not None else _base_walk(base[name], keys)  # type: ignore[index]
        if v is not UNDEF:
            out[name] = v
    if type(base) is dict and base:
        rt_tree_order(ctx, out, base)
    return out


def _table_key(key: Any) -> Any:
    """A computed key that is not a string, as a child table holds it (a
    scalar's frozen form; MISS for a composite, which names no child)."""
    if type(key) in (int, float, bool) or key is None or type(key) is Decimal:
        return freeze(key)
    return MISS


def rt_own_child(
    ctx: EvalContext,
    table: dict[str, Callable[[EvalContext], Any]],
    own: Callable[[EvalContext, Any], Any],
    key: Any,
    keys: tuple[Any, ...],
    below: tuple[str, ...] = (),
) -> Any:
    """``data.<node>[key].<below>`` for a computed ``key``, where ``node`` has
    rules with variable keys (``own``: their part, read along a path:
    ``PK<id>``) and rules below some children (``table``: their readers of
    ``<child>.<below>``): the other children, and the child's documents off
    ``below``, are not evaluated. ``keys``: the keys the read goes on with,
    as far as it knows them (``key`` first): the own part is read along them."""
    fn = table.get(key if type(key) is str else _table_key(key))
    if fn is not None:
        return fn(ctx)
    value = own(ctx, keys or (key,)).get(key if type(key) is str else freeze(key), UNDEF)
    for k in below:
        if value is UNDEF:
            break
        value = rt_get(value, k)
    return value


def rt_own_at(ctx: EvalContext, own: Callable[[EvalContext], Any], defs: Callable[[EvalContext, Any], None], name: str, keys: tuple[Any, ...]) -> Any:
    """A partial object's rules' part (``own``: ``P<id>``, ``R<id>``) to be
    read along ``keys`` (its first keys, as far as the read knows them).

    OPA evaluates, for a read, only the rules whose path can match it: a
    conflict elsewhere is no error there. The whole part is evaluated first
    (once per evaluation); where that meets a conflict, the rules (``defs``)
    run again into a part for this path only (helpers.ReadPath), kept in
    the evaluation's cache under ``name`` and the path."""
    c = ctx.cache
    if name not in c:
        try:
            return own(ctx)
        except EvalConflictError:
            c[name] = None  # (it conflicts: from now on, by path)
    path = tuple([k if type(k) is str else freeze(k) for k in keys])
    part = c.get((name, path), MISS)
    if part is MISS:
        part = {VALUES: ReadPath(path)}
        defs(ctx, part)
        c[(name, path)] = part
    return part


def rt_own_key(ctx: EvalContext, own: Callable[[EvalContext], Any], defs: Callable[[EvalContext, Any], None], name: str, keys: tuple[Any, ...], member: Callable[[EvalContext, Any], Any]) -> Any:
    """:func:`rt_own_at` where the rules each have one variable key: read
    at a key, the part holds what ``member`` (``PM<id>``, codegen.set_members)
    finds there, the rules run for that key alone, as in OPA."""
    if not keys:
        return rt_own_at(ctx, own, defs, name, keys)
    key = keys[0]
    value = member(ctx, key)
    return {} if value is UNDEF else {key if type(key) is str else freeze(key): value}


def keyed_part(namespace: dict[str, Any], name: str, keys: tuple[Any, ...]) -> Callable[[EvalContext], Any]:
    """A reader of the own part ``name`` (``PK<id>``) along ``keys``, as a part
    of :func:`ground_document` (looked up at each call: a hot program replaces it)."""

    def part(ctx: EvalContext, namespace: dict[str, Any] = namespace, name: str = name, keys: Any = keys) -> Any:
        return namespace[name](ctx, keys)

    return part


#: A table of the rule tree below a node (see codegen.docs.key_trie_name); its
#: second item: whether rules are at the child, or a partial object's reader along keys.
KeyTrie = dict[str, tuple[Callable[[EvalContext], Any], Any, Any]]


#: A key of ``rt_node_select``'s pattern that a variable iterates.
RT_ANY = object()


def rt_node_select(ctx: EvalContext, trie: KeyTrie, pattern: tuple[Any, ...], base_path: tuple[str, ...]) -> Any:
    """The part of ``data.<node>`` that ``pattern``'s keys lead to, as nested
    objects to walk the same keys in: a computed key selects one child, an
    iterated one (``RT_ANY``) every child of the rule tree and of base data.
    As OPA's rule tree reads such a ref, a child holding rules gives its
    document (the keys after it are looked up in it), a key naming no child
    holding rules reads base data only, and the keys' end gives the whole
    document there; nothing else is evaluated."""
    return _select(ctx, trie, pattern, 0, rt_path(ctx.data, base_path), not base_path)


def _select(ctx: EvalContext, trie: KeyTrie, pattern: tuple[Any, ...], idx: int, base: Any, root: bool = False) -> dict[Any, Any]:
    from pyrego.runtime.helpers import rt_data_get

    key = pattern[idx]
    listed = rt_root_base(base) if root else base  # (the keys iterated; a child's value is read from all of base)
    if key is RT_ANY:
        # OPA's order: base data's keys, then the rule tree's other children, sorted.
        names: list[Any] = list(listed) if type(listed) is dict else []
        rest = [k for k in trie if type(listed) is not dict or k not in listed]
        # (a function's or rule's other keys, a[0]: Rego's order, numbers before strings)
        names += sorted(rest) if all(type(k) is str for k in rest) else sorted(rest, key=lambda k: functools.cmp_to_key(compare)(thaw(k)))
    else:
        names = [key]
    out: dict[Any, Any] = {}
    for name in names:
        entry = trie.get(name if type(name) is str else _table_key(name))
        if entry is None:
            value = rt_data_get(base, name)
        else:
            fn, has_rules, below_trie = entry
            if has_rules is not True and has_rules is not False and idx + 1 < len(pattern) and pattern[idx + 1] is not RT_ANY:
                # A partial object read at computed keys (``has_rules``: its reader
                # along them): a conflict under another key is no error, as in OPA.
                keys = []
                for k in pattern[idx + 1 :]:
                    if k is RT_ANY:
                        break
                    keys.append(k)
                try:
                    value = fn(ctx)
                except EvalConflictError:
                    value = has_rules(ctx, tuple(keys))
            elif has_rules or idx + 1 == len(pattern):
                value = fn(ctx)
            else:
                value = _select(ctx, below_trie, pattern, idx + 1, base.get(_child_key(name), UNDEF) if type(base) is dict else UNDEF)
        if value is not UNDEF:
            out[name if type(name) is str else freeze(name)] = value
    if key is RT_ANY and type(listed) is dict and listed:
        rt_tree_order(ctx, out, listed)
    return out


DOC_HELPERS: dict[str, Any] = {
    "rt_own_child": rt_own_child,
    "rt_own_at": rt_own_at,
    "rt_own_key": rt_own_key,
    "rt_doc_put": rt_doc_put,
    "rt_doc_merge": rt_doc_merge,
    "rt_node_child_path": rt_node_child_path,
    "rt_node_project": rt_node_project,
    "rt_node_select": rt_node_select,
    "RT_ANY": RT_ANY,
    "rt_root_base": rt_root_base,
    "rt_with_system": rt_with_system,
}

__all__ = [
    "DOC_HELPERS",
    "ground_document",
    "keyed_part",
    "nonempty_part",
    "own_key",
    "pruned_document",
    "rt_doc_merge",
    "rt_doc_put",
    "rt_node_child_path",
    "rt_node_project",
    "rt_node_select",
    "rt_own_at",
    "rt_own_key",
    "rt_own_child",
    "rt_root_base",
    "rt_with_system",
]
