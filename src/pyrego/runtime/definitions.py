"""How a complete rule's or a function's definitions, which must agree,
give its value, where OPA's rule index decides which of them run and in
which order, and where a conflict between them is reported."""

from __future__ import annotations

from typing import Any, Callable

from pyrego.errors import EvalCancelError, EvalConflictError, EvalError, Location
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import UNDEF, equal

#: OPA's index lookup for an evaluation (see index_guards.early_exit_test):
#: the definitions it finds, by position, in its order, and whether it stops
#: at the first value.
IndexLookup = Callable[..., tuple[tuple[int, ...], bool]]


class ElseLocations:
    """Where a conflict with a definition that has ``else`` branches is
    reported: at the branch whose value it is, as OPA (its rule). ``which``
    names, in ``namespace``, the definition made again to give ``[branch,
    value]``: it runs only when a conflict is raised."""

    __slots__ = ("namespace", "which", "locations")

    def __init__(self, namespace: dict[str, Any], which: str, locations: tuple[Location | None, ...]) -> None:
        self.namespace = namespace
        self.which = which
        self.locations = locations

    def at(self, ctx: EvalContext, args: tuple[Any, ...]) -> Location | None:
        try:
            r = self.namespace[self.which](ctx, *args)
        except EvalError:
            return self.locations[0]
        if type(r) not in (list, tuple) or len(r) != 2:
            return self.locations[0]
        return self.locations[int(r[0])]


def rt_def_conflict(ctx: EvalContext, message: str, where: Any, args: tuple[Any, ...] = ()) -> None:
    """Raise the conflict of a definition whose value differs, at ``where``
    (its location, or its ElseLocations)."""
    location = where.at(ctx, args) if type(where) is ElseLocations else where
    raise EvalConflictError(message, location)


def rt_all_defs_early(ctx: EvalContext, defs: Any, conflict: str, where: Any, index: IndexLookup, args: tuple[Any, ...] = ()) -> Any:
    """A complete rule's (or a function's, for ``args``) value from all its
    definitions, which must agree, as OPA finds it: OPA tries the
    definitions its rule index finds for this evaluation's input (and
    arguments), in the index's order (which can depend on them), and where
    those all have one value stops at the first that succeeds. ``index``
    gives their positions in ``defs`` in that order and whether it stops
    early. The outcome differs from running ``defs`` in their order only
    where a definition raises or values conflict: only then is the index
    asked (the common case pays nothing), and the definitions are tried
    again in its order, those already run by their results."""
    r = UNDEF
    done: list[Any] = []
    for d in defs:
        try:
            x = d(ctx, *args)
        except EvalCancelError:
            raise
        except EvalError as exc:
            return _in_index_order(ctx, defs, conflict, where, index, args, done, exc)
        done.append(x)
        if x is not UNDEF:
            if r is UNDEF:
                r = x
            elif not equal(r, x):
                return _in_index_order(ctx, defs, conflict, where, index, args, done)
    return r


def rt_first_found(ctx: EvalContext, defs: Any, index: IndexLookup, args: tuple[Any, ...] = ()) -> Any:
    """The value of a document (or a function, for ``args``) whose
    definitions have one value, where the order OPA tries them in depends
    on the input (and a body can raise or print): the first that succeeds
    of those its index finds, in its order (OPA runs no other)."""
    for j in index(ctx, args)[0]:
        x = defs[j](ctx, *args)
        if x is not UNDEF:
            return x
    return UNDEF


def _in_index_order(
    ctx: EvalContext, defs: Any, conflict: str, where: Any, index: IndexLookup, args: tuple[Any, ...], done: list[Any], failed: EvalError | None = None
) -> Any:
    """Where two of ``done``'s values conflict, or the definition after them
    raised ``failed``: the definitions tried again in OPA's index's order
    (see rt_all_defs_early), whose first error or conflict is OPA's (the
    one raising is never run where the index does not find it)."""
    order, early = index(ctx, args)
    r = UNDEF
    ran = len(done)
    for j in order:
        if failed is not None and j == ran:
            raise failed
        y = done[j] if j < ran else defs[j](ctx, *args)
        if y is not UNDEF:
            if early:
                return y
            if r is UNDEF:
                r = y
            elif not equal(r, y):
                rt_def_conflict(ctx, conflict, where[j], args)
    return r


__all__ = ["ElseLocations", "IndexLookup", "rt_all_defs_early", "rt_def_conflict", "rt_first_found"]
