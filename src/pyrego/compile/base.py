"""The compiler's basic shapes: the kinds of document, :class:`RuleNode` (a
document under ``data`` and its rules), :class:`FuncRef`, and package paths."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Ref, Scalar, Var
from pyrego.errors import RegoCompileError

COMPLETE, PARTIAL_SET, PARTIAL_OBJECT, FUNCTION = "complete", "set", "object", "function"


@dataclass(frozen=True)
class FuncRef:
    """A builtin named as a value, only valid as a ``with`` replacement (``with f as count``)."""

    name: str
    location: ast.Location = ast.NO_LOCATION


@dataclass(eq=False)
class RuleNode:
    """A document under ``data`` and the rules that define it."""

    path: tuple[str, ...]
    id: int
    kind: str | None = None
    rules: list[ast.Rule] = field(default_factory=list)
    default: ast.Rule | None = None
    children: dict[str, RuleNode] = field(default_factory=dict)
    arity: int | None = None
    # A module's package: its document exists (an empty object at least)
    # even when no rule defines anything in it, as in OPA.
    is_package: bool = False

    @property
    def name(self) -> str:
        return ast_path_text(self.path)

    def walk(self) -> list[RuleNode]:
        out = [self]
        for c in self.children.values():
            out.extend(c.walk())
        return out

    def has_rules(self) -> bool:
        return bool(self.rules) or self.default is not None


def ast_path_text(path: tuple[str, ...]) -> str:
    text = "data"
    for p in path:
        text += "." + p if p.isidentifier() else f'["{p}"]'
    return text


def data_ref(path: tuple[str, ...], location: ast.Location) -> ast.Ref:
    return Ref(Var("data", location), tuple([Scalar(p, location) for p in path]), location)


def package_path(module: ast.Module) -> tuple[str, ...]:
    parts = []
    for p in module.package.path:
        if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
            raise RegoCompileError("package path must be strings", module.package.location)
        parts.append(p.value)
    return tuple(parts)
