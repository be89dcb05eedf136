"""The bodies the type checker reads: rule bodies as OPA's compiler leaves them.

OPA type-checks rules after a series of rewrites (:mod:`.lower` makes them):
every call nested in an operand is an expression of its own with an output
variable, ``:=`` and ``some x in xs`` are unifications, refs among a call's
operands are bound to variables first, and so on. These classes hold the
result. Scalars and variables are pyrego's own :class:`~pyrego.ast.nodes.Scalar`
and :class:`~pyrego.ast.nodes.Var`; composite terms are rebuilt here because their
parts change (no calls remain inside terms, comprehension bodies are lowered).
"""

from __future__ import annotations

import json
from typing import Callable, Union

from pyrego.ast.nodes import Scalar, Var
from pyrego.errors import Location

NO_LOCATION = Location("", 0, 0)


class IRef:
    """``head[path...]``: head is a variable once lowered (or a scalar in odd refs like ``1[i]``)."""

    __slots__ = ("head", "path", "location")

    def __init__(self, head: Term, path: tuple[Term, ...], location: Location) -> None:
        self.head = head
        self.path = path
        self.location = location

    def terms(self) -> tuple[Term, ...]:
        """The ref as OPA holds it: the head then the path."""
        return (self.head,) + self.path


class IArray:
    __slots__ = ("items", "location")

    def __init__(self, items: tuple[Term, ...], location: Location) -> None:
        self.items = items
        self.location = location


class IObject:
    __slots__ = ("items", "location")

    def __init__(self, items: tuple[tuple[Term, Term], ...], location: Location) -> None:
        self.items = items
        self.location = location


class ISet:
    __slots__ = ("items", "location")

    def __init__(self, items: tuple[Term, ...], location: Location) -> None:
        self.items = items
        self.location = location


class ICompr:
    """A comprehension: ``kind`` is "array", "set" or "object" (``key`` set for objects)."""

    __slots__ = ("kind", "key", "term", "body", "location")

    def __init__(self, kind: str, key: Term | None, term: Term, body: list[IExpr], location: Location) -> None:
        self.kind = kind
        self.key = key
        self.term = term
        self.body = body
        self.location = location


Term = Union[Scalar, Var, IRef, IArray, IObject, ISet, ICompr]


class IWith:
    __slots__ = ("target", "value", "location")

    def __init__(self, target: Term, value: Term, location: Location) -> None:
        self.target = target
        self.value = value
        self.location = location


CALL, TERM, EVERY = "call", "term", "every"


class IExpr:
    """One expression: a call (``op`` and ``operands``; ``eq`` is unification),
    a term alone, or ``every`` (``domain``, ``key``, ``value``, ``body``)."""

    __slots__ = (
        "kind", "op", "op_path", "operands", "term", "negated", "withs", "location", "generated", "every_key", "every_value", "body", "closures"
    )

    def __init__(
        self,
        kind: str,
        location: Location,
        *,
        op: str = "",
        operands: tuple[Term, ...] = (),
        term: Term | None = None,
        negated: bool = False,
        withs: tuple[IWith, ...] = (),
        generated: bool = False,
    ) -> None:
        self.kind = kind
        self.op = op
        # A rule's path below data when ``op`` names a function (its keys may hold dots).
        self.op_path: tuple[str, ...] | None = None
        self.operands = operands
        self.term = term
        self.negated = negated
        self.withs = withs
        self.location = location
        self.generated = generated
        self.every_key: Term | None = None
        self.every_value: Term | None = None
        self.body: list[IExpr] = []
        # Whether a comprehension may be inside (set by the lowering).
        self.closures = False


def eq_expr(lhs: Term, rhs: Term, location: Location, withs: tuple[IWith, ...] = ()) -> IExpr:
    """``lhs = rhs`` as the compiler generates it."""
    return IExpr(CALL, location, op="eq", operands=(lhs, rhs), withs=withs, generated=True)


# ---------------------------------------------------------------- OPA's text for terms

_KEYWORDS = frozenset(
    {"as", "contains", "default", "else", "every", "false", "if", "import", "in", "not", "null", "package", "some", "true", "with"}
)


#: How a message names a variable (see :meth:`pyrego.typecheck.lower.Lowerer.show`).
Names = Callable[[str], str]


def display_name(name: str) -> str:
    """A variable as the user wrote it: the compiler's ``x#3`` is ``x``, a wildcard ``_``."""
    base = name.split("#", 1)[0]
    return "_" if base.startswith("$") else base


def _identifier(text: str) -> bool:
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return False
    return all(c.isalnum() or c == "_" for c in text) and text.isascii()


def scalar_text(s: Scalar) -> str:
    v = s.value
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return s.text if s.text is not None else str(v)


def term_text(t: Term | None, names: Names | None = None) -> str:
    """A term as OPA's ``String()`` writes it (refs with ``.key`` where they can);
    ``names`` names the variables (by default as the user wrote them)."""
    if t is None:
        return "<nil>"
    if isinstance(t, Scalar):
        return scalar_text(t)
    if isinstance(t, Var):
        return names(t.name) if names is not None else display_name(t.name)
    if isinstance(t, IRef):
        return ref_text(t.terms(), names)
    if isinstance(t, IArray):
        return "[" + ", ".join(term_text(x, names) for x in t.items) + "]"
    if isinstance(t, ISet):
        return "{" + ", ".join(term_text(x, names) for x in t.items) + "}" if t.items else "set()"
    if isinstance(t, IObject):
        return "{" + ", ".join(f"{term_text(k, names)}: {term_text(v, names)}" for k, v in t.items) + "}"
    body = "; ".join(expr_text(e, names) for e in t.body)
    if t.kind == "object":
        return "{" + f"{term_text(t.key, names)}: {term_text(t.term, names)} | {body}" + "}"
    if t.kind == "set":
        return "{" + f"{term_text(t.term, names)} | {body}" + "}"
    return f"[{term_text(t.term, names)} | {body}]"


def ref_text(terms: tuple[Term, ...], names: Names | None = None) -> str:
    """OPA's text of a ref given as its terms (head first)."""
    if not terms:
        return ""
    out = term_text(terms[0], names)
    for p in terms[1:]:
        if isinstance(p, Scalar) and isinstance(p.value, str) and _identifier(p.value) and p.value not in _KEYWORDS:
            out += "." + p.value
        else:
            out += "[" + term_text(p, names) + "]"
    return out


def expr_text(e: IExpr, names: Names | None = None) -> str:
    if e.kind == TERM:
        return term_text(e.term, names)
    if e.kind == CALL:
        return f"{e.op}(" + ", ".join(term_text(x, names) for x in e.operands) + ")"
    return "every"
