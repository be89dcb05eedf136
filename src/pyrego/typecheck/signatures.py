"""Builtin function types, made from the declarations table on first use."""

from __future__ import annotations

from pyrego.typecheck import static_types as T

_CACHE: dict[str, T.FunctionType | None] = {}

# An extension (Engine.add_extension) takes and returns anything.
_ANY_FUNCTIONS: dict[int, T.FunctionType] = {}


def builtin_type(name: str) -> T.FunctionType | None:
    """The declared type of builtin ``name`` (None when OPA declares no such builtin)."""
    try:
        return _CACHE[name]
    except KeyError:
        pass
    from pyrego.typecheck.signatures_data import SIGNATURES

    entry = SIGNATURES.get(name)
    fn: T.FunctionType | None = None
    if entry is not None:
        args, result, variadic = entry
        fn = T.FunctionType(
            tuple(T.from_decl(a) for a in args),
            T.from_decl(result) if result is not None else None,
            T.from_decl(variadic) if variadic is not None else None,
        )
    _CACHE[name] = fn
    return fn


def any_function(arity: int) -> T.FunctionType:
    """The type of a function of ``arity`` arguments about which nothing is known."""
    fn = _ANY_FUNCTIONS.get(arity)
    if fn is None:
        fn = _ANY_FUNCTIONS[arity] = T.FunctionType(tuple([T.ANY] * arity), T.ANY)
    return fn
