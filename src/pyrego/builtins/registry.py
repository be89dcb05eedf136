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
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pyrego.runtime.values import type_name


class BuiltinError(Exception):
    """A builtin failed; the message is OPA's text without the builtin name."""

    code = "eval_builtin_error"


class OperandTypeError(BuiltinError):
    """An argument of the wrong type."""

    code = "eval_type_error"


class BuiltinHalt(Exception):
    """An error that always ends the evaluation, even without strict builtin errors
    (OPA's ``Halt``: e.g. ``http.send`` with ``raise_error`` false never halts,
    but some builtins do)."""

    def __init__(self, message: str, code: str = "eval_builtin_error") -> None:
        super().__init__(message)
        self.code = code


class BuiltinCancel(BuiltinHalt):
    """The evaluation's deadline passed while a builtin worked: the evaluation
    ends with :class:`pyrego.EvalCancelError`."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "eval_cancel_error")


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


REGISTRY: dict[str, Builtin] = {}

F = TypeVar("F", bound=Callable[..., Any])


def builtin(
    name: str,
    arity: int,
    *,
    needs_context: bool = False,
    nondeterministic: bool = False,
    relation: bool = False,
    cancellable: bool = False,
) -> Callable[[F], F]:
    """Register the decorated function as the builtin ``name``."""

    def register(fn: F) -> F:
        if name in REGISTRY:
            raise ValueError(f"builtin {name} registered twice")
        call: Callable[..., Any] = fn
        if cancellable:
            call = _context_optional(fn, arity)
        REGISTRY[name] = Builtin(name, call, arity, needs_context or cancellable, nondeterministic, relation)
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
    """The builtin called ``name``, importing every category module on first use."""
    if not _loaded:  # (tested here too: compiling looks builtins up per call site)
        _load_all()
    return REGISTRY.get(name)


_loaded = False
_loading = False
_load_lock = threading.RLock()


def _load_all() -> None:
    """Import every category module once; other threads wait until all are in.

    The flag is set only after the imports: a thread that saw it set early
    would look up builtins that were not registered yet. A module that looks
    a builtin up while it is imported re-enters here on the same thread
    (the lock is re-entrant) and returns at once."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            import importlib
            import pkgutil

            from pyrego import builtins as package

            for info in pkgutil.iter_modules(package.__path__):
                if info.name not in ("registry",):
                    importlib.import_module(f"{package.__name__}.{info.name}")
            _loaded = True
        finally:
            _loading = False


def all_builtins() -> dict[str, Builtin]:
    _load_all()
    return dict(REGISTRY)
