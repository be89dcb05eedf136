"""The Rego abstract syntax tree.

Every node is a frozen dataclass carrying the :class:`~pyrego.errors.Location`
of its first token. The parser builds these nodes; the compiler reads them and
never mutates them (it builds new nodes where it rewrites).

Terms
    ``Scalar`` (null, boolean, number, string), ``Var``, ``Ref``, ``Array``,
    ``Object``, ``SetTerm``, the three comprehensions, ``Call`` (builtin or
    user function calls, including infix operators), ``TemplateString``.

Expressions (one line of a body)
    ``Expr`` wraps one statement: a term (true when defined and not false),
    ``Assign`` (``:=``), ``Unify`` (``=``), ``SomeVars`` (``some x, y``),
    ``SomeIn`` (``some k, v in xs``) or ``Every``; with ``negated`` for ``not``
    and ``with_mods`` for ``with ... as ...``.

Rules and modules
    ``Rule`` (head + body + optional ``else`` chain), ``Module``.

Operators are calls: ``a + b`` is ``Call(op="plus", args=(a, b))``. The names
are OPA's builtin names: ``plus minus mul div rem and or equal neq lt lte gt
gte internal.member_2 internal.member_3``. Unary minus on a non-literal is
``Call("minus", (Scalar(0), x))``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from decimal import Decimal
from typing import Any, TypeVar, Union

from pyrego.errors import Location

NO_LOCATION = Location("", 0, 0)

_Node = TypeVar("_Node", bound=type)


def _fast_init(cls: _Node) -> _Node:
    """Give a frozen, slotted dataclass a faster ``__init__`` (same signature).

    The generated one gets past the frozen ``__setattr__`` with
    ``object.__setattr__`` for each field; calling the slots' own descriptors
    does the same for about half the cost, which shows in parsing, where node
    construction is a good part of the work. Written out with ``exec``, as
    dataclasses itself does, so that the call takes plain positional or
    keyword arguments.
    """
    params: list[str] = []
    lines: list[str] = []
    namespace: dict[str, object] = {}
    for f in fields(cls):
        assert f.default_factory is MISSING and f.init, f"{cls.__name__}.{f.name}"
        if f.default is MISSING:
            params.append(f.name)
        else:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        namespace[f"_set_{f.name}"] = vars(cls)[f.name].__set__
        lines.append(f"    _set_{f.name}(self, {f.name})\n")
    source = f"def __init__(self, {', '.join(params)}):\n{''.join(lines)}"
    exec(source, namespace)  # noqa: S102 - fixed text built from field names
    init: Any = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    return cls


# ---------------------------------------------------------------- terms


@_fast_init
@dataclass(frozen=True, slots=True)
class Scalar:
    """``null``, ``true``/``false``, a number (int, float or Decimal) or a string.

    ``value`` is None, bool, int, float, Decimal or str. ``text`` keeps a number's
    source spelling (for exact decimal handling and error messages).
    """

    value: None | bool | int | float | Decimal | str
    location: Location = field(default=NO_LOCATION, compare=False)
    text: str | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Var:
    """A variable, including ``_`` (wildcard; the parser renames each
    wildcard to a unique ``$wildcardN`` name) and the roots ``input``/``data``."""

    name: str
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Ref:
    """A reference: ``head`` followed by ``path`` operands.

    ``input.a[x]["b"]`` is ``Ref(Var("input"), (Scalar("a"), Var("x"), Scalar("b")))``.
    ``head`` is a Var, or a composite/call term for refs like ``[1,2][i]`` or
    ``f(x).y``.
    """

    head: Term
    path: tuple[Term, ...]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Array:
    items: tuple[Term, ...]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Object:
    items: tuple[tuple[Term, Term], ...]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class SetTerm:
    """A set literal ``{1, 2}`` or the empty set ``set()``."""

    items: tuple[Term, ...]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class ArrayCompr:
    term: Term
    body: Body
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class SetCompr:
    term: Term
    body: Body
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class ObjectCompr:
    key: Term
    value: Term
    body: Body
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Call:
    """A call of a builtin, a user function or an operator.

    ``op`` is the dotted name as written (``count``, ``object.get``,
    ``data.lib.f``, ``plus``); ``op_ref`` is the Ref it was written as, kept
    so the compiler can resolve imports and package-relative names.
    """

    op: str
    args: tuple[Term, ...]
    location: Location = field(default=NO_LOCATION, compare=False)
    op_ref: Ref | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class TemplateString:
    """``$"Hello {input.name}"``: literal text parts and embedded terms in order."""

    parts: tuple[str | Term, ...]
    raw: bool = False
    location: Location = field(default=NO_LOCATION, compare=False)


Term = Union[
    Scalar, Var, Ref, Array, Object, SetTerm, ArrayCompr, SetCompr, ObjectCompr, Call, TemplateString
]


# ---------------------------------------------------------------- body statements


@_fast_init
@dataclass(frozen=True, slots=True)
class Assign:
    """``lhs := rhs``: declares the variables of ``lhs`` (a var or a composite pattern)."""

    lhs: Term
    rhs: Term
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Unify:
    """``lhs = rhs``: unification, binding unbound variables on either side."""

    lhs: Term
    rhs: Term
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class SomeVars:
    """``some x, y``: declares local variables."""

    vars: tuple[Var, ...]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class SomeIn:
    """``some v in xs`` (``key`` None) or ``some k, v in xs``.

    ``key``/``value`` are terms (usually vars, may be patterns)."""

    key: Term | None
    value: Term
    collection: Term
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Every:
    """``every k, v in xs { body }`` (``key`` None for ``every v in xs``)."""

    key: Var | None
    value: Var
    domain: Term
    body: Body
    location: Location = field(default=NO_LOCATION, compare=False)


Statement = Union[Term, Assign, Unify, SomeVars, SomeIn, Every]


@_fast_init
@dataclass(frozen=True, slots=True)
class With:
    """``with target as value``; target is a Ref rooted at input/data or a function name."""

    target: Ref
    value: Term
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Expr:
    statement: Statement
    negated: bool = False
    with_mods: tuple[With, ...] = ()
    location: Location = field(default=NO_LOCATION, compare=False)


Body = tuple[Expr, ...]


# ---------------------------------------------------------------- rules and modules


@_fast_init
@dataclass(frozen=True, slots=True)
class RuleHead:
    """A rule head.

    - ``p := 1`` / ``p = 1`` / ``p if ...``: ``ref=Ref(Var(p), ())``, ``value`` set
      (``true`` when omitted), ``key`` None.
    - ``p contains x`` (v1) or ``p[x]`` (v0, no value): ``key=x``, ``value`` None.
    - ``p[k] := v`` / ``a.b[c].d := v``: ``ref`` holds the whole path, ``value`` set.
      In v1, ``p[x] if ...`` without a value has value ``true``.
    - functions ``f(x, y) := z``: ``args`` set (a tuple, possibly empty).
    - ``assign`` is True for ``:=``.
    """

    ref: Ref
    value: Term | None = None
    key: Term | None = None
    args: tuple[Term, ...] | None = None
    assign: bool = False
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: head, body (empty for ``p := 1``), optional else chain.

    ``else_`` holds the next ``else`` branch as a Rule whose head has only
    ``value`` (and the same ref/args as this one).
    """

    head: RuleHead
    body: Body
    default: bool = False
    else_: Rule | None = None
    location: Location = field(default=NO_LOCATION, compare=False)
    module_file: str = field(default="", compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Import:
    """``import data.a.b as c`` / ``import input.x`` / ``import rego.v1`` / ``import future.keywords.in``."""

    path: Ref
    alias: str | None = None
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Annotation:
    """A ``# METADATA`` block, parsed from YAML. ``scope`` is OPA's scope name."""

    scope: str
    data: dict[str, object]
    location: Location = field(default=NO_LOCATION, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Module:
    """A parsed policy file. ``package`` is ``Ref(Var("data"), (Scalar("a"), ...))``."""

    package: Ref
    imports: tuple[Import, ...]
    rules: tuple[Rule, ...]
    file: str = ""
    rego_v1: bool = True
    annotations: tuple[Annotation, ...] = ()
    location: Location = field(default=NO_LOCATION, compare=False)
    #: False when the text holds no comprehension (the parser's finding, so
    #: that checks of variable declarations can skip rules that declare none)
    closures: bool = field(default=True, compare=False)
    #: False when the text has no ``with`` keyword (the parser's finding: no
    #: comment or string holding the word counts)
    withs: bool = field(default=True, compare=False)
    #: False when the text holds no template string (the parser's finding:
    #: only then is OPA's check of their parts' variables skipped)
    templates: bool = field(default=True, compare=False)


def call_name_text(op: str) -> str:
    """A called function's name as OPA prints it in messages: a ref whose
    keyword keys are in brackets (``data.q["contains"]``); builtins as named;
    a wildcard (``_(1)``) as written."""
    head, *keys = op.split(".")
    if head != "data":
        return "_" + op[len(head) :] if head.startswith("$wildcard") else op
    import json

    out = head
    for key in keys:
        out += f"[{json.dumps(key)}]" if key in _KEYWORDS_IN_REFS else "." + key
    return out


# (OPA brackets these in a ref's text whatever the module's Rego version)
_KEYWORDS_IN_REFS = frozenset(
    {"as", "contains", "default", "else", "every", "false", "if", "import", "in", "not", "null", "package", "some", "true", "with"}
)


def ref_to_string(ref: Ref, written: bool = False) -> str:
    """``data.a["b c"][x]`` style text for a ref (used in messages and names);
    ``written``: numbers as written (``a[1.0]``: a function's name, as OPA
    tells ``1.0`` from ``1``)."""
    head = ref.head
    out = head.name if isinstance(head, Var) else "<term>"
    for part in ref.path:
        if isinstance(part, Scalar) and isinstance(part.value, str) and part.value.isidentifier():
            out += "." + part.value
        elif isinstance(part, Scalar) and written and part.text is not None and type(part.value) is not bool:
            out += "[" + part.text + "]"
        elif isinstance(part, Scalar):
            import json

            out += "[" + json.dumps(part.value) + "]"
        elif isinstance(part, Var):
            out += "[" + part.name + "]"
        else:
            out += "[...]"
    return out
