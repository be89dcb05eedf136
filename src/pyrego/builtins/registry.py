"""The builtin registry: every Rego builtin, by OPA name.

A builtin is a plain Python function over Rego values (see
:mod:`pyrego.runtime.values`). It returns a value, or ``UNDEFINED`` when OPA's
builtin is undefined for those arguments, and raises:

- :class:`OperandTypeError` when an argument has the wrong type (OPA's
  ``eval_type_error``: ``count: operand 1 must be one of {array, object, set,
  string} but got number``);
- :class:`BuiltinError` for any other failure (OPA's ``eval_builtin_error``).

Without strict builtin errors both make the calling expression undefined, as
in OPA; with strict builtin errors they end the evaluation.

Builtins that need the evaluation (``time.now_ns`` is fixed per query,
``rand.intn`` is stable per query, ``print`` writes to the engine's output,
``http.send`` caches) are registered with ``needs_context=True`` and take the
:class:`~pyrego.runtime.context.EvalContext` as their first argument.

Builtins whose work grows with their input are registered with
``cancellable=True``: they take the context too, for the evaluation's
deadline (see :mod:`.limits`), and raise :class:`BuiltinCancel` once it has
passed. Called with their arguments alone (outside an evaluation), they run
without a deadline.

The builtins load per category: :mod:`.table` says which module of this
package registers each builtin, and :func:`lookup` imports that module the
first time one of its builtins is asked for (so a policy that calls no crypto
builtin never imports ``cryptography``). A test keeps the table in step with
what the modules register. The error classes live in
:mod:`pyrego.runtime.builtin_errors` (the runtime raises and catches them);
they are re-exported here for the builtins' callers.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pyrego.builtins.table import MODULES, NONDETERMINISTIC, RELATION
from pyrego.runtime.builtin_errors import BuiltinCancel, BuiltinError, BuiltinHalt, OperandTypeError
from pyrego.runtime.values import type_name

__all__ = [
    "REGISTRY",
    "Builtin",
    "BuiltinCancel",
    "BuiltinError",
    "BuiltinHalt",
    "OperandTypeError",
    "all_builtins",
    "builtin",
    "declared_builtins",
    "lookup",
    "operand_error",
]


def operand_error(position: int, value: Any, *expected: str) -> OperandTypeError:
    """OPA's message for an argument of the wrong type (``position`` counts from 1)."""
    try:
        got = type_name(value)
    except TypeError:
        got = type(value).__name__
    # OPA lists the accepted types in the order the builtin declares them.
    names = list(dict.fromkeys(expected))
    if len(names) == 1:
        want = names[0]
    else:
        want = "one of {" + ", ".join(names) + "}"
    return OperandTypeError(f"operand {position} must be {want} but got {got}")


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    fn: Callable[..., Any]
    arity: int
    needs_context: bool = False
    # Nondeterministic builtins (http.send, time.now_ns, rand.intn, ...)
    # must never be folded at compile time.
    nondeterministic: bool = False
    # Relation builtins (e.g. graph.reachable_paths is not one; walk is) return
    # an iterable of results rather than one value.
    relation: bool = False
    # An extension's declared type in OPA's JSON form (Engine.add_extension's
    # ``decl``), read by the type checker; None: any arguments, any result.
    decl: Any = None


#: The builtins of the category modules loaded so far, by name. A module's
#: builtins enter only once the module has run to its end: a thread that found
#: one earlier could call a function whose helpers are not defined yet.
REGISTRY: dict[str, Builtin] = {}

# What the decorators registered, per module (``fn.__module__``), until published.
_DECLARED: dict[str, dict[str, Builtin]] = {}
_NAMES: dict[str, str] = {}  # builtin name -> the module registering it
_PACKAGE = __name__.rpartition(".")[0]

F = TypeVar("F", bound=Callable[..., Any])


def builtin(
    name: str,
    arity: int,
    *,
    needs_context: bool = False,
    cancellable: bool = False,
) -> Callable[[F], F]:
    """Register the decorated function as the builtin ``name``.

    Whether it is nondeterministic or a relation is OPA's fact, recorded in
    :mod:`.table` with the builtin's module."""

    def register(fn: F) -> F:
        # (A module imported again, as after importlib.reload or when a test
        # drops it from sys.modules, registers its builtins again.)
        if _NAMES.get(name, fn.__module__) != fn.__module__:
            raise ValueError(f"builtin {name} registered twice")
        _NAMES[name] = fn.__module__
        call: Callable[..., Any] = fn
        if cancellable:
            call = _context_optional(fn, arity)
        entry = Builtin(name, call, arity, needs_context or cancellable, name in NONDETERMINISTIC, name in RELATION)
        _DECLARED.setdefault(fn.__module__, {})[name] = entry
        return fn

    return register


_NO_ARG = object()


def _context_optional(fn: Callable[..., Any], arity: int) -> Callable[..., Any]:
    """``fn(ctx, *args)`` that may also be called as ``fn(*args)``, without a
    deadline. A fixed signature per arity keeps the evaluation's call cheap."""

    def plain() -> Any:
        from pyrego.runtime.context import EvalContext

        return EvalContext()

    call: Callable[..., Any]
    if arity == 1:

        def call(a: Any, b: Any = _NO_ARG) -> Any:
            return fn(plain(), a) if b is _NO_ARG else fn(a, b)

    elif arity == 2:

        def call(a: Any, b: Any, c: Any = _NO_ARG) -> Any:
            return fn(plain(), a, b) if c is _NO_ARG else fn(a, b, c)

    elif arity == 3:

        def call(a: Any, b: Any, c: Any, d: Any = _NO_ARG) -> Any:
            return fn(plain(), a, b, c) if d is _NO_ARG else fn(a, b, c, d)

    else:

        def call(*args: Any) -> Any:
            return fn(plain(), *args) if len(args) == arity else fn(*args)

    call.__module__ = fn.__module__
    call.__name__ = fn.__name__
    call.__qualname__ = fn.__qualname__
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn  # type: ignore[union-attr]
    return call




def lookup(name: str) -> Builtin | None:
    """The builtin called ``name``, importing its category module on first use.

    Compiling looks builtins up per call site: a loaded builtin costs one dict
    lookup, any other name two."""
    found = REGISTRY.get(name)
    if found is None and name in MODULES:
        found = _load(f"{_PACKAGE}.{MODULES[name]}", name)
    return found


def _load(module: str, name: str | None = None) -> Builtin | None:
    """Import ``module`` and publish its builtins; the builtin ``name`` of it.

    Python's import lock makes other threads wait while a module runs, so
    that a module is published only once it is complete. The one exception is
    a module that looks one of its own builtins up while it runs (the import
    is re-entered on the same thread and returns the module unfinished): that
    thread gets the builtin without publishing it."""
    mod = importlib.import_module(module)
    declared = _DECLARED.get(module, {})
    if getattr(getattr(mod, "__spec__", None), "_initializing", False):
        return declared.get(name) if name is not None else None
    REGISTRY.update(declared)
    return REGISTRY.get(name) if name is not None else None


def all_builtins() -> dict[str, Builtin]:
    """Every builtin, by name (this imports every category module)."""
    for module in sorted(set(MODULES.values())):
        _load(f"{_PACKAGE}.{module}")
    for module in list(_DECLARED):  # (any registered outside the table)
        _load(module)
    return dict(REGISTRY)


def declared_builtins() -> dict[str, str]:
    """Builtin name -> module, for every builtin of the modules imported so far
    (published or not): what :mod:`.table` must list."""
    return {name: module for module, names in _DECLARED.items() for name in names}
