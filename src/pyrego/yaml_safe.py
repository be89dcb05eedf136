"""YAML that cannot blow up: the one way pyrego reads YAML.

Aliases let a few hundred bytes of YAML stand for billions of nodes (eight
levels of nine aliases each: 9**8). PyYAML composes an alias as a second
reference to the anchored node, so parsing stays small, but anything that
turns the document into plain values (every reader here does) expands it.

Go's YAML decoders (go-yaml v2 and v3, which OPA uses) count, while they
decode, every node and every node decoded inside an alias; once there are
more than 1,000 nodes and 100 of them inside aliases, a document whose
share of alias-decoded nodes exceeds an allowed ratio (99% up to 400,000
nodes, falling to 10% at 4,000,000) fails with "document contains excessive
aliasing". :func:`check_aliasing` makes the same count over a composed
document, without expanding more than Go would, and every YAML reader in
pyrego runs it before converting a document: the ``yaml.*`` builtins,
``# METADATA`` blocks, data and input files, and ``http.send`` responses.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

EXCESSIVE_ALIASING = "document contains excessive aliasing"

_RATIO_LOW = 400_000
_RATIO_HIGH = 4_000_000


class AliasingError(yaml.YAMLError):
    """A document whose aliases expand too much (or an anchor that contains itself)."""


def _allowed_ratio(decoded: int) -> float:
    if decoded <= _RATIO_LOW:
        return 0.99
    if decoded >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)")


def _anchor_name(node: Node, text: str | None) -> str:
    # An anchored node starts at its "&name" (PyYAML keeps no anchor names).
    index = getattr(node.start_mark, "index", None)
    m = _ANCHOR.match(text, index) if text is not None and index is not None else None
    return m.group(1) if m else ""


def check_aliasing(root: Node | None, text: str | None = None, tick: Any = None) -> None:
    """Raise :class:`AliasingError` if decoding ``root`` (a composed document
    of ``text``) would expand its aliases too much, counting as Go's decoder
    does, or if an anchored node contains an alias to itself.

    A node object met again through another parent is an alias. ``tick``
    (optional) is called with the number of nodes counted, now and then."""
    if root is None or (text is not None and "*" not in text):
        return  # no alias without a "*"
    # Where each node first appeared (its anchor's place): reaching it from
    # anywhere else is following an alias.
    home: dict[int, tuple[int, int]] = {}
    decoded = 1  # the document node
    in_alias = 0
    # (node, parent id, index in parent, alias depth); an explicit stack so
    # that deep documents need no recursion.
    stack: list[tuple[Node, int, int, int]] = [(root, 0, 0, 0)]
    open_aliases: list[int] = []
    while stack:
        node, parent, index, depth = stack.pop()
        if node is None:  # the end of an alias's expansion
            open_aliases.pop()
            continue
        place = (parent, index)
        first = home.setdefault(id(node), place)
        if first != place:
            # An alias: Go decodes the alias node, then its target one level deeper.
            decoded += 1
            in_alias += depth > 0
            if id(node) in open_aliases:
                raise AliasingError(f"anchor '{_anchor_name(node, text)}' value contains itself")
            open_aliases.append(id(node))
            stack.append((None, 0, 0, 0))  # type: ignore[arg-type]
            depth += 1
        decoded += 1
        in_alias += depth > 0
        if in_alias > 100 and decoded > 1000 and in_alias / decoded > _allowed_ratio(decoded):
            raise AliasingError(EXCESSIVE_ALIASING)
        if tick is not None and not decoded & 0xFFF:
            tick(0x1000)
        if isinstance(node, ScalarNode):
            continue
        me = id(node)
        if isinstance(node, SequenceNode):
            children = node.value
            for i in range(len(children) - 1, -1, -1):
                stack.append((children[i], me, i, depth))
        elif isinstance(node, MappingNode):
            pairs = node.value
            for i in range(len(pairs) - 1, -1, -1):
                key, value = pairs[i]
                stack.append((value, me, 2 * i + 1, depth))
                stack.append((key, me, 2 * i, depth))


def compose(text: str, loader_class: Any) -> Node | None:
    """The single document in ``text`` composed by ``loader_class`` (None
    when empty), after :func:`check_aliasing`."""
    loader = loader_class(text)
    try:
        node: Node | None = loader.get_single_node()
        check_aliasing(node, text)
        return node
    finally:
        loader.dispose()


def load(text: str, loader_class: Any = yaml.SafeLoader) -> Any:
    """The single document in ``text`` (None when empty), built by
    ``loader_class`` (a SafeLoader subclass) after :func:`check_aliasing`."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_aliasing(node, text)
        return loader.construct_document(node)
    finally:
        loader.dispose()


class _CaseLoader(yaml.SafeLoader):
    """A YAML loader close to the one OPA uses (YAML to JSON, then JSON numbers).

    Timestamps stay strings, numbers keep their exact value (``1e3`` is a
    number, as in Go's YAML, and long decimals are not rounded).
    """


_CaseLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_FLOAT_RX = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_CaseLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RX, list("-+0123456789."))


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = str(loader.construct_scalar(node)).replace("_", "")
    try:
        d = Decimal(text)
    except InvalidOperation:
        return yaml.SafeLoader.construct_yaml_float(loader, node)
    if not d.is_finite():
        return yaml.SafeLoader.construct_yaml_float(loader, node)
    f = float(d)
    if f != float("inf") and f != float("-inf") and Decimal(repr(f)) == d:
        return f
    return d  # exact value; the engine turns Decimal into its own numbers


_CaseLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)  # type: ignore[arg-type]


def load_yaml(text: str) -> Any:
    """Parse YAML text as OPA reads data, input and conformance files (JSON
    values: timestamps stay strings, numbers keep their exact value), with
    the aliases checked (:func:`check_aliasing`)."""
    return load(text, _CaseLoader)
