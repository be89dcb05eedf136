"""Runtime helpers that generated code calls.

Generated code runs with a globals dict holding only these names (and the
compiler's constants, locations and builtin functions). Each helper is correct
for every value type; the code generator emits inline fast paths for the
common cases and falls back to these.
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Callable, Iterator

from pyrego.builtins.sprintf import format_value
from pyrego.errors import EvalBuiltinError, EvalCancelError, EvalConflictError, EvalError, EvalTypeError, Location
from pyrego.runtime.builtin_errors import BuiltinError, BuiltinHalt
from pyrego.runtime.context import EvalContext
from pyrego.runtime.definitions import rt_all_defs_early, rt_def_conflict, rt_first_found
from pyrego.runtime.values import PLAIN_TYPES, UNDEF, check_plain, compare, equal, freeze, sort_key, thaw

MISS = object()
ONCE = (None,)


def rt_get(value: Any, key: Any) -> Any:
    """``value[key]`` in Rego: object key, array index, set membership; else undefined."""
    t = type(value)
    if t is dict:
        return value.get(key if type(key) is str else freeze(key), UNDEF)
    if t is list or t is tuple:
        tk = type(key)
        if tk is int:
            if 0 <= key < len(value):
                return value[key]
            return UNDEF
        if tk is float and key.is_integer():
            k = int(key)
            if 0 <= k < len(value):
                return value[k]
        return UNDEF
    if t is set or t is frozenset:
        return key if freeze(key) in value else UNDEF
    # (Undefined and scalars end here; a caller's object of another type is
    # an error, never an undefined read: see values.check_plain.)
    if value is not UNDEF:
        check_plain(value)
    return UNDEF


def rt_dpath(value: Any, *keys: str) -> list[Any]:
    """The compact form of consecutive literal-key lookups: each step's value (see codegen_tiers)."""
    out = []
    for key in keys:
        value = rt_get(value, key)
        out.append(value)
    return out


def rt_dinput(ctx: EvalContext, *keys: str) -> list[Any]:
    """:func:`rt_dpath` from the input document, which comes first."""
    return [ctx.input, *rt_dpath(ctx.input, *keys)]


#: A string key that base data reads as an array index (Go's strconv.Atoi).
INDEX_TEXT = re.compile(r"[+-]?[0-9]{1,18}")


def rt_data_get(value: Any, key: Any) -> Any:
    """``rt_get`` for base data: an object key given as a number matches its string form."""
    got = rt_get(value, key)
    if got is UNDEF and type(value) is dict and (type(key) is int or type(key) is float or type(key) is Decimal):
        from pyrego.runtime.numbers import format_number

        return value.get(format_number(key), UNDEF)
    if got is UNDEF and type(value) is list and type(key) is str and INDEX_TEXT.fullmatch(key):
        # Base data is a store addressed by path: a string segment indexes an
        # array when it reads as an integer (data.a["0"], "+1", "00"), as in OPA.
        index = int(key)
        return value[index] if 0 <= index < len(value) else UNDEF
    return got


#: How many evaluations run now in OPA's iteration order (see sorted_iteration):
#: while any does, every evaluation iterates that way (as correct, only slower).
SORTED_RUNS = 0
_SORTED_RUNS_LOCK = threading.Lock()


@contextmanager
def sorted_iteration() -> Iterator[None]:
    """Within the block, evaluations iterate every object and set sorted, as
    OPA does. They iterate them in Python's order where the order cannot
    show in the answer, but it shows in which of several errors comes
    first: an evaluation that fails is run again in this mode, so the error
    (or the value reached before any error) is OPA's."""
    global SORTED_RUNS
    with _SORTED_RUNS_LOCK:
        SORTED_RUNS += 1
    try:
        yield
    finally:
        with _SORTED_RUNS_LOCK:
            SORTED_RUNS -= 1


#: Errors after which an evaluation runs again in OPA's order (not a time
#: limit or a recursion: the order changes neither).
REPLAYED_ERRORS = frozenset({EvalError, EvalTypeError, EvalBuiltinError, EvalConflictError})


def run_sorted(fns: tuple[Callable[[Any], Any], ...], default: Any, ctx: Any) -> Any:
    """The value of a rule (its functions ``fns`` tried in turn on the fresh
    context ``ctx``, then ``default``) evaluated in OPA's iteration order,
    after a run in Python's order failed (see sorted_iteration)."""
    with sorted_iteration():
        for fn in fns:
            value = fn(ctx)
            if value is not UNDEF:
                return value
        return default


def rt_items(value: Any) -> Iterator[tuple[Any, Any]]:
    """(key, value) pairs to iterate ``value[k]`` with an unbound ``k``."""
    t = type(value)
    if t is dict:
        if SORTED_RUNS:
            return rt_items_sorted(value)
        return ((k if type(k) is str else thaw(k), v) for k, v in value.items())
    if t is list or t is tuple:
        return enumerate(value)
    if t is set or t is frozenset:
        if SORTED_RUNS:
            return rt_items_sorted(value)
        return ((m, m) for m in (k if type(k) is str else thaw(k) for k in value))
    if value is not UNDEF:  # (often here: a missing collection)
        check_plain(value)
    return iter(())


def rt_values(value: Any) -> Iterator[Any]:
    """The values of a collection (``some x in xs``)."""
    t = type(value)
    if t is list or t is tuple:
        return iter(value)
    if t is dict:
        if SORTED_RUNS:
            return rt_values_sorted(value)
        return iter(value.values())
    if t is set or t is frozenset:
        if SORTED_RUNS:
            return rt_values_sorted(value)
        return (k if type(k) is str else thaw(k) for k in value)
    if value is not UNDEF:
        check_plain(value)
    return iter(())


def _sorted_keys(keys: Any) -> list[Any]:
    keys = list(keys)
    if all(type(k) is str for k in keys):
        keys.sort()
        return keys
    # The keys themselves, sorted by value: a caller's dict may hold a key
    # that is not in frozen form (a Python ``True``), which freeze(thaw(k))
    # would not find again.
    return sorted(keys, key=lambda k: sort_key(thaw(k)))


def rt_items_sorted(value: Any) -> Iterator[tuple[Any, Any]]:
    """:func:`rt_items` in OPA's order: object keys and set members sorted."""
    t = type(value)
    if t is dict:
        return ((k if type(k) is str else thaw(k), value[k]) for k in _sorted_keys(value))
    if t is set or t is frozenset:
        return ((m, m) for m in (k if type(k) is str else thaw(k) for k in _sorted_keys(value)))
    return rt_items(value)


#: The ``ctx.builtin_cache`` entry holding, by ``id``, the documents of data
#: nodes where base data and rules meet: (document, its keys in OPA's order).
TREE_ORDER = "tree order"


def rt_tree_order(ctx: Any, doc: dict[Any, Any], base: Any) -> dict[Any, Any]:
    """``doc``, a document of base data ``base`` with the rule tree's children
    put in, noted to iterate as OPA's rule tree does: base data's keys first,
    then the other children, each group sorted. (The note lives as long as
    the query; the document is held there, so its ``id`` stays its own.)"""
    if type(base) is dict and base and len(doc) > len(base):
        rest = [k for k in doc if k not in base]
        order = _sorted_keys(base) + _sorted_keys(rest)
        if order != _sorted_keys(doc):
            ctx.builtin_cache.setdefault(TREE_ORDER, {})[id(doc)] = (doc, order)
    return doc


def _tree_keys(ctx: Any, value: dict[Any, Any]) -> list[Any] | None:
    """The keys of ``value`` in the order rt_tree_order noted, if it did."""
    q = ctx.q
    caches = q.builtin_cache if q is not None else None
    if caches is None:
        return None
    entry = caches.get(TREE_ORDER, {}).get(id(value))
    return entry[1] if entry is not None and entry[0] is value else None


def rt_items_built(value: Any) -> Iterator[tuple[Any, Any]]:
    """An object literal's entries in the order it was built: OPA iterates a
    literal with non-constant keys in the order of its key terms (a local
    variable before a ref), not of its keys' values, so not sorted here,
    also while evaluations iterate sorted (see sorted_iteration)."""
    if type(value) is dict:
        return ((k if type(k) is str else thaw(k), v) for k, v in value.items())
    return rt_items(value)


def rt_values_built(value: Any) -> Iterator[Any]:
    """:func:`rt_items_built`'s values."""
    return iter(value.values()) if type(value) is dict else rt_values(value)


def rt_items_ordered(ctx: Any, value: Any) -> Iterator[tuple[Any, Any]]:
    """:func:`rt_items_sorted`, but a document where base data and rules
    meet in the order OPA's rule tree gives (see rt_tree_order)."""
    if type(value) is dict:
        keys = _tree_keys(ctx, value)
        if keys is not None:
            return ((k if type(k) is str else thaw(k), value[k]) for k in keys)
    return rt_items_sorted(value)


def rt_values_ordered(ctx: Any, value: Any) -> Iterator[Any]:
    """:func:`rt_values_sorted` in the order of :func:`rt_items_ordered`."""
    if type(value) is dict:
        keys = _tree_keys(ctx, value)
        if keys is not None:
            return (value[k] for k in keys)
    return rt_values_sorted(value)


def rt_values_sorted(value: Any) -> Iterator[Any]:
    t = type(value)
    if t is dict:
        return (value[k] for k in _sorted_keys(value))
    if t is set or t is frozenset:
        return (k if type(k) is str else thaw(k) for k in _sorted_keys(value))
    return rt_values(value)


def rt_lt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return a < b  # type: ignore[no-any-return]
    return compare(a, b) < 0


def rt_le(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return a <= b  # type: ignore[no-any-return]
    return compare(a, b) <= 0


def rt_gt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return a > b  # type: ignore[no-any-return]
    return compare(a, b) > 0


def rt_ge(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str or ta is float):
        return a >= b  # type: ignore[no-any-return]
    return compare(a, b) >= 0


def rt_ne(a: Any, b: Any) -> bool:
    return not equal(a, b)


def rt_member(x: Any, coll: Any) -> bool:
    """``x in coll``: a value of an array, set or object."""
    t = type(coll)
    if t is set or t is frozenset:
        return freeze(x) in coll
    if t is list or t is tuple:
        tx = type(x)
        # Python's ``in`` (C speed) first: where no member is ``==`` to a
        # string or number, none is equal in Rego either (Rego's equality of
        # these is Python's, with fewer matches: ``true`` is not ``1``).
        if tx is str:
            if x not in coll:
                return False
            if type(coll[coll.index(x)]) is str:
                return True
            for v in coll:
                if type(v) is str and v == x:
                    return True
            return False
        if (tx is int or tx is float) and x not in coll:
            return False
        return any(equal(x, v) for v in coll)
    if t is dict:
        return any(equal(x, v) for v in coll.values())
    if coll is not UNDEF:
        check_plain(coll)
    return False


def rt_member3(k: Any, v: Any, coll: Any) -> bool:
    """``k, v in coll``."""
    t = type(coll)
    if t is dict:
        got = coll.get(k if type(k) is str else freeze(k), UNDEF)
        return got is not UNDEF and equal(got, v)
    if t is list or t is tuple:
        got = rt_get(coll, k)
        return got is not UNDEF and equal(got, v)
    if t is set or t is frozenset:
        return equal(k, v) and freeze(k) in coll
    if coll is not UNDEF:
        check_plain(coll)
    return False


def rt_set(items: Any) -> frozenset[Any]:
    return frozenset([freeze(x) for x in items])


def rt_object(pairs: Any, location: Location | None = None) -> dict[Any, Any]:
    """An object literal with computed keys, its entries in the order OPA
    builds it (:func:`pyrego.compile.ground.in_build_order`): of equal keys,
    the last entry's value is kept, as in OPA (no conflict)."""
    out: dict[Any, Any] = {}
    for k, v in pairs:
        out[k if type(k) is str else freeze(k)] = v
    return out


def rt_conflict(message: str, location: Location | None) -> None:
    raise EvalConflictError(message, location)


def resolve_index_ref(ctx: EvalContext, ref: tuple[Any, ...], args: tuple[Any, ...]) -> Any:
    """The value of a rule index's ref (``input...``, base ``data...`` or a function argument), or UNDEF."""
    head = ref[0]
    if head == "args":
        i = ref[1]
        return args[i] if i < len(args) else UNDEF
    doc: Any
    if head == "data":
        doc = ctx.data
        for key in ref[1:]:
            doc = rt_data_get(doc, key)  # base data is addressed by path (data[2] reads "2")
            if doc is UNDEF:
                return UNDEF
        return doc
    doc = ctx.input
    for key in ref[1:]:
        t = type(doc)
        if t is dict:
            doc = doc.get(key, UNDEF) if type(key) is str else UNDEF
        elif (t is list or t is tuple) and type(key) is int:
            doc = doc[key] if 0 <= key < len(doc) else UNDEF
        else:
            return UNDEF
        if doc is UNDEF:
            return UNDEF
    return doc


def rt_obj_put(acc: dict[Any, Any], key: Any, value: Any, location: Location | None) -> None:
    """Add a partial-object entry; a key with two different values is a conflict."""
    fk = key if type(key) is str else freeze(key)
    old = acc.get(fk, MISS)
    if old is MISS:
        acc[fk] = value
    elif not equal(old, value):
        _conflict(acc, key, location)


class _ValuesKey:
    """The type of :data:`VALUES`: equal to no key a document may hold."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "VALUES"


#: The key, in a partial object being built, of the ids of the objects that
#: its rules gave as values (``p[x] := {...}``), where rules with longer heads
#: make objects too (``p[x].y := 1`` makes ``p[x]``); removed when it is done
#: (:func:`rt_obj_done`). A path goes on through the objects rules' paths
#: made only: one through a value is a conflict, as in OPA, and never changes
#: that value (a constant of the policy, or the caller's data).
VALUES: Any = _ValuesKey()


class ReadPath(set):  # type: ignore[type-arg]
    """The :data:`VALUES` of a partial object built for a read of one path
    (``path``: its keys, as far as the read knows them; see
    :func:`pyrego.runtime.docs.rt_own_at`): OPA evaluates, for a read, only
    the rules whose path can match it, so an entry whose path leaves the
    read's is not made, and a conflict there is none."""

    __slots__ = ("path",)

    def __init__(self, path: tuple[Any, ...]) -> None:
        super().__init__()
        self.path = path

    def admits(self, keys: tuple[Any, ...]) -> bool:
        """Whether an entry at ``keys`` lies along the read's path."""
        for k, want in zip(keys, self.path):
            if not equal(k if type(k) is str else freeze(k), want):
                return False
        return True


def _conflict(top: dict[Any, Any], key: Any, location: Location | None) -> None:
    """A conflict under the top-level ``key`` of the partial object ``top``
    (no error where ``top`` is built for a read of another key, see :class:`ReadPath`)."""
    values = top.get(VALUES)
    if values is not None and values.__class__ is not set and not values.admits((key,)):
        return
    raise EvalConflictError("object keys must be unique", location)


def rt_obj_done(acc: dict[Any, Any]) -> dict[Any, Any]:
    """The partial object ``acc`` once its rules are done (see :data:`VALUES`)."""
    acc.pop(VALUES, None)
    return acc


def _value_given(top: dict[Any, Any], value: Any) -> None:
    """Note ``value``, an object, as a value a rule gave in the partial object ``top``."""
    values = top.get(VALUES)
    if values is None:
        values = top[VALUES] = set()
    values.add(id(value))


def rt_obj_put_value(acc: dict[Any, Any], key: Any, value: Any, location: Location | None) -> None:
    """:func:`rt_obj_put` in a partial object whose rules also make objects
    with longer heads, or to which rules deeper down add (see :data:`VALUES`)."""
    fk = key if type(key) is str else freeze(key)
    old = acc.get(fk, MISS)
    if old is MISS:
        acc[fk] = value
        if type(value) is dict:
            _value_given(acc, value)
    elif not equal(old, value):
        _conflict(acc, key, location)
    elif type(old) is dict:
        _value_given(acc, old)  # (an object paths made, now a value too)


def _subobject(acc: dict[Any, Any], keys: tuple[Any, ...], location: Location | None) -> dict[Any, Any]:
    """The object at ``keys`` under ``acc``, made where missing (ref-head rule paths)."""
    values = acc.get(VALUES)
    if values is not None and values.__class__ is not set and not values.admits(keys):
        return {}  # (off the path a ReadPath part is built for: kept nowhere)
    cur = acc
    for key in keys:
        fk = key if type(key) is str else freeze(key)
        nxt = cur.get(fk, MISS)
        if nxt is MISS:
            nxt = cur[fk] = {}
        elif type(nxt) is not dict or (values is not None and id(nxt) in values):
            raise EvalConflictError("object keys must be unique", location)
        cur = nxt
    return cur


def rt_obj_put_path(acc: dict[Any, Any], keys: tuple[Any, ...], value: Any, location: Location | None) -> None:
    """Add an entry at a multi-key ref-head path (``p[x].y[z] := v``): as
    :func:`_subobject` then :func:`rt_obj_put_value`, in one call."""
    values = acc.get(VALUES)
    if values is not None and values.__class__ is not set and not values.admits(keys):
        return  # (off the path read: a ReadPath's)
    cur = acc
    for key in keys[:-1]:
        fk = key if type(key) is str else freeze(key)
        nxt = cur.get(fk, MISS)
        if nxt is MISS:
            nxt = cur[fk] = {}
        elif type(nxt) is not dict or (values is not None and id(nxt) in values):
            raise EvalConflictError("object keys must be unique", location)
        cur = nxt
    last = keys[-1]
    fk = last if type(last) is str else freeze(last)
    old = cur.get(fk, MISS)
    if old is MISS:
        cur[fk] = value
        if type(value) is dict:
            _value_given(acc, value)
    elif not equal(old, value):
        raise EvalConflictError("object keys must be unique", location)
    elif type(old) is dict:
        _value_given(acc, old)  # (an object paths made, now a value too)


def rt_obj_add_member(acc: dict[Any, Any], keys: tuple[Any, ...], member: Any, location: Location | None) -> None:
    """Add ``member`` to the set at ``keys`` (ref-head ``a[x] contains y`` rules)."""
    rt_obj_add_leaf(acc, keys, location).add(freeze(member))


def rt_obj_add_path(acc: dict[Any, Any], keys: tuple[Any, ...], location: Location | None) -> None:
    """Make the objects at ``keys`` where missing: a ``a[1].b := v`` rule whose
    path is all constants makes ``{1: {}}`` even when its body fails, as OPA's
    rule tree has a node for each constant key."""
    _subobject(acc, keys, location)


def rt_obj_add_leaf(acc: dict[Any, Any], keys: tuple[Any, ...], location: Location | None) -> set[Any]:
    """The set at ``keys``, made where missing: a ``a.b[1] contains y`` rule
    whose path is all constants is a set rule of that path, defined (empty)
    when its body fails, as in OPA."""
    cur = _subobject(acc, keys[:-1], location)
    last = keys[-1] if type(keys[-1]) is str else freeze(keys[-1])
    leaf = cur.get(last, MISS)
    if leaf is MISS:
        leaf = cur[last] = set()
    elif type(leaf) is not set:
        values = acc.get(VALUES)
        if values is not None and values.__class__ is not set and not values.admits(keys):
            return set()  # (off the path a ReadPath part is built for: no conflict there)
        raise EvalConflictError("object keys must be unique", location)
    return leaf  # type: ignore[no-any-return]


def rt_builtin_error(ctx: EvalContext, exc: Exception, name: str, location: Location | None) -> Any:
    """A builtin failed: undefined, or an error with strict builtin errors."""
    if isinstance(exc, BuiltinHalt):
        # A builtin that stopped at the deadline ends the evaluation as the
        # generated code's own deadline check does.
        cls = EvalCancelError if exc.code == "eval_cancel_error" else EvalError
        text = exc.message if isinstance(exc, EvalError) else str(exc)  # (a walk's cancel: see budget)
        raise cls(f"{name}: {text}", location, code=exc.code) from None
    code = getattr(exc, "code", "eval_builtin_error")
    message = f"{name}: {exc}"
    if ctx.strict:
        if code == "eval_type_error":
            raise EvalTypeError(message, location)
        raise EvalBuiltinError(message, location, code=code)
    ctx.builtin_errors.append(exc)
    return UNDEF


def rt_call_builtin(ctx: EvalContext, fn: Callable[..., Any], name: str, location: Location | None, *args: Any) -> Any:
    try:
        return fn(*args)
    except (BuiltinError, BuiltinHalt) as exc:
        return rt_builtin_error(ctx, exc, name, location)


def builtin_call(fn: Callable[..., Any], name: str, location: Location | None, needs_context: bool) -> Callable[..., Any]:
    """The compact form's call of builtin ``fn`` at one call site, ``C<n>(ctx, *args)``:
    what :func:`rt_call_builtin` does, with the builtin, its name and the
    call's location bound here instead of written at each call (see codegen_tiers)."""
    if needs_context:

        def call_with_context(ctx: EvalContext, *args: Any) -> Any:
            try:
                return fn(ctx, *args)
            except (BuiltinError, BuiltinHalt) as exc:
                return rt_builtin_error(ctx, exc, name, location)

        return call_with_context

    def call(ctx: EvalContext, *args: Any) -> Any:
        try:
            return fn(*args)
        except (BuiltinError, BuiltinHalt) as exc:
            return rt_builtin_error(ctx, exc, name, location)

    return call


def rt_print(ctx: EvalContext, args: list[Any]) -> bool:
    """``print(...)``: undefined arguments print as ``<undefined>``; always true."""
    parts = []
    for a in args:
        if a is UNDEF:
            parts.append("<undefined>")
        elif type(a) is str:
            parts.append(a)
        else:
            parts.append(format_value(a))  # Rego's text: {1, 2}, set(), {"a": 1}
    ctx.emit_print(" ".join(parts))
    return True


def rt_template(parts: list[Any]) -> str:
    """A template string: text parts and values (strings as they are, others as JSON)."""
    out = []
    for p in parts:
        if p is UNDEF:
            out.append("<undefined>")
        elif type(p) is str:
            out.append(p)
        else:
            out.append(format_value(p))
    return "".join(out)


def rt_check_deadline(ctx: EvalContext, where: Location | None = None) -> None:
    """End the evaluation cleanly once its time limit has passed (``where``: the loop's expression)."""
    if ctx.deadline is not None and time.monotonic() > ctx.deadline:
        raise EvalCancelError("evaluation timed out", where)


def rt_is_array(v: Any) -> bool:
    t = type(v)
    return t is list or t is tuple


def rt_in_strings(x: Any, members: frozenset[str]) -> bool:
    """Whether ``x``, which is no ``str``, equals a member of a constant set
    of strings: never for a value; for a caller's object of no Rego type, as
    :func:`rt_member` has it (see values.equal)."""
    if type(x) in PLAIN_TYPES or x is UNDEF:
        return False
    return any(equal(x, m) for m in members)


def rt_plain(v: Any) -> bool:
    """True for a value of a Rego type, after an exact type test failed; an
    error for a caller's object of any other type (see values.check_plain)."""
    return check_plain(v)


# The types a Rego collection has in Python (``every`` needs one as its domain).
COLLECTION_TYPES = frozenset((dict, list, tuple, set, frozenset))

# The types ``count`` takes (the fast form counts them inline: see codegen_tiers).
SIZED_TYPES = frozenset((str, dict, list, tuple, set, frozenset))

HELPERS: dict[str, Any] = {
    "UNDEF": UNDEF,
    "COLLECTION_TYPES": COLLECTION_TYPES,
    "SIZED_TYPES": SIZED_TYPES,
    "PLAIN_TYPES": PLAIN_TYPES,
    "MISS": MISS,
    "ONCE": ONCE,
    "freeze": freeze,
    "thaw": thaw,
    "rt_eq": equal,
    "rt_ne": rt_ne,
    "rt_lt": rt_lt,
    "rt_le": rt_le,
    "rt_gt": rt_gt,
    "rt_ge": rt_ge,
    "rt_get": rt_get,
    "rt_data_get": rt_data_get,
    "rt_items": rt_items,
    "rt_values": rt_values,
    "rt_items_sorted": rt_items_sorted,
    "rt_items_built": rt_items_built,
    "rt_values_built": rt_values_built,
    "rt_values_sorted": rt_values_sorted,
    "rt_items_ordered": rt_items_ordered,
    "rt_values_ordered": rt_values_ordered,
    "rt_tree_order": rt_tree_order,
    "rt_member": rt_member,
    "rt_member3": rt_member3,
    "rt_set": rt_set,
    "rt_object": rt_object,
    "rt_conflict": rt_conflict,
    "rt_all_defs_early": rt_all_defs_early,
    "rt_def_conflict": rt_def_conflict,
    "rt_first_found": rt_first_found,
    "rt_obj_put": rt_obj_put,
    "rt_obj_put_path": rt_obj_put_path,
    "rt_obj_add_member": rt_obj_add_member,
    "rt_obj_add_leaf": rt_obj_add_leaf,
    "rt_obj_add_path": rt_obj_add_path,
    "rt_obj_done": rt_obj_done,
    "rt_obj_put_value": rt_obj_put_value,
    "VALUES": VALUES,
    "rt_builtin_error": rt_builtin_error,
    "rt_call_builtin": rt_call_builtin,
    # The compact forms of literal-key lookups (see codegen_tiers).
    "rt_dget": rt_get,
    "rt_dpath": rt_dpath,
    "rt_dinput": rt_dinput,
    "rt_print": rt_print,
    "rt_check_deadline": rt_check_deadline,
    "rt_template": rt_template,
    "rt_is_array": rt_is_array,
    "rt_plain": rt_plain,
    "rt_in_strings": rt_in_strings,
    "BuiltinError": BuiltinError,
    "BuiltinHalt": BuiltinHalt,
    "EvalConflictError": EvalConflictError,
    "dict": dict,
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "type": type,
    "len": len,
    "enumerate": enumerate,
}
