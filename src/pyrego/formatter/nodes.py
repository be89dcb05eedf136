"""The tree the formatter prints: a module shaped as OPA's formatter sees it.

OPA's printer works on OPA's AST, whose shapes differ from pyrego's in ways
that show in the output: a body expression is a call (operator first, ``x :=
y`` being ``assign(x, y)``), a ``some`` declaration or an ``every``; a rule
without a body has the body ``true``; partial rules keep their key; every
node knows its source text. :mod:`pyrego.formatter.convert` builds this tree
from pyrego's AST and the source; :mod:`pyrego.formatter.writer` prints it.
The nodes are mutable because OPA's printer adjusts a few locations as it
goes (an ``else`` value takes its head's location, for one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = [
    "GENERATED_FILE",
    "Loc",
    "Comment",
    "Term",
    "Expr",
    "SomeDecl",
    "Every",
    "With",
    "Head",
    "Rule",
    "Import",
    "Package",
    "Module",
    "NEGATIVE_ROW",
]

#: The file name of locations the formatter makes up (OPA's "__format_default__").
GENERATED_FILE = "__format_default__"


@dataclass
class Loc:
    """A node's position and source text (OPA's ``Location``)."""

    row: int
    col: int
    text: str = ""
    offset: int = -1
    file: str = ""


#: What ``closingLoc`` answers when there is no closing bracket.
NEGATIVE_ROW = Loc(-1, 0)


@dataclass(eq=False)
class Comment:
    """``# text`` at a location; ``text`` excludes the '#'."""

    loc: Loc
    text: str

    def __str__(self) -> str:
        return "#" + self.text


@dataclass(eq=False)
class Term:
    """A term. ``kind`` says which fields are used:

    - ``null`` / ``boolean`` / ``number``: ``text`` is how it is printed
    - ``string``: ``value`` (the string)
    - ``var``: ``value`` (the name; wildcards are ``$...`` names)
    - ``ref``: ``items`` (head, then the path)
    - ``array`` / ``set``: ``items``; ``object``: ``pairs``
    - ``call``: ``items`` (the operator, a ref term, then the arguments);
      ``name`` is the operator's dotted name
    - ``arraycompr`` / ``setcompr``: ``term`` and ``body``;
      ``objectcompr``: ``key``, ``term`` (the value) and ``body``
    - ``template``: ``parts`` (string terms and expressions), ``raw``
    - ``verbatim``: ``text`` is written as it is (constructs printed as written)
    """

    kind: str
    loc: Loc
    text: str = ""
    value: str = ""
    name: str = ""
    items: list[Term] = field(default_factory=list)
    pairs: list[tuple[Term, Term]] = field(default_factory=list)
    term: Term | None = None
    key: Term | None = None
    body: list[Expr] = field(default_factory=list)
    parts: list[Term | Expr] = field(default_factory=list)
    raw: bool = False


@dataclass(eq=False)
class SomeDecl:
    """``some x, y`` (var symbols) or ``some x in xs`` (one member call symbol)."""

    loc: Loc
    symbols: list[Term]


@dataclass(eq=False)
class Every:
    loc: Loc
    key: Term | None
    value: Term
    domain: Term
    body: list[Expr]


@dataclass(eq=False)
class With:
    loc: Loc
    target: Term
    value: Term


ExprTerms = Union[Term, list[Term], SomeDecl, Every]


@dataclass(eq=False)
class Expr:
    """A body expression: a term, a call (a list: operator then arguments),
    a ``some`` declaration or an ``every``."""

    loc: Loc
    terms: ExprTerms
    negated: bool = False
    withs: list[With] = field(default_factory=list)
    #: the row where the expression's own terms end (before any `with`)
    terms_end_row: int = 0
    #: the source of the expression's terms (after `not`, before any `with`)
    terms_loc: Loc | None = None


@dataclass(eq=False)
class Head:
    loc: Loc
    ref: list[Term]
    key: Term | None = None
    value: Term | None = None
    args: list[Term] | None = None
    assign: bool = False
    #: the value is an implied `true` that is not written (OPA: it has the head's location)
    implied_value: bool = False
    name: str = ""


@dataclass(eq=False)
class Rule:
    loc: Loc
    head: Head
    #: the body as written; empty when the rule has none (OPA's body `true`)
    body: list[Expr]
    default: bool = False
    else_: Rule | None = None
    #: the body is OPA's generated `true` (or was written as `{ true }`)
    const_body: bool = False


@dataclass(eq=False)
class Import:
    loc: Loc
    path: Term
    alias: str = ""


@dataclass(eq=False)
class Package:
    loc: Loc
    path: list[Term]


@dataclass(eq=False)
class Module:
    package: Package
    imports: list[Import]
    rules: list[Rule]
    comments: list[Comment]
