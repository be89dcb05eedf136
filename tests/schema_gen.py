"""Random JSON schemas and the policies that read through them, for differential tests.

:func:`schema_program` writes one module from a seed: ``# METADATA`` blocks
(rule, document, package or subpackages scope) declaring inline schemas for
``input``, a path inside ``input``, or a document under ``data``, and rules
that read those documents in many ways: refs with literal keys (some the
schema allows, some not), iteration, builtin calls on what they find,
assignments, comprehensions. The schemas use every construct the checker
reads (``properties``, ``items`` as one schema or a tuple, lists of type
names, ``anyOf``, ``allOf``, ``$ref`` into ``definitions``, objects with no
properties, ``additionalProperties``, ``enum``), so that OPA refuses a good
share of the programs with ``undefined ref`` or argument errors.

The module ends with a call of ``rego.metadata.rule()``: OPA reads the
annotations of a program only when it uses them.
"""

from __future__ import annotations

import json
import random
from typing import Any

KEYS = ["a", "b", "c", "d", "type"]  # ("type": a property name, not the keyword)
SCALARS = ["string", "number", "integer", "boolean", "null"]


class SchemaGen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.definitions: dict[str, Any] = {}

    def chance(self, pct: int) -> bool:
        return self.rng.randrange(100) < pct

    def schema(self, depth: int = 0) -> dict[str, Any]:
        r = self.rng.randrange(100)
        if depth >= 3 or r < 30:
            s: dict[str, Any] = {"type": self.rng.choice(SCALARS)}
            if self.chance(10):
                s["type"] = self.rng.sample(SCALARS, 2)
            if self.chance(10) and s["type"] == "string":
                s["enum"] = ["x", "y"]
            return s
        if r < 65:
            return self.object(depth)
        if r < 80:
            s = {"type": "array"}
            if self.chance(75):
                s["items"] = self.schema(depth + 1) if self.chance(75) else [self.schema(depth + 1) for _ in range(2)]
            return s
        if r < 87:
            return {"anyOf": [self.schema(depth + 1), self.schema(depth + 1)]}
        if r < 93:
            return {"allOf": [self.object(depth + 1, min_props=1), self.object(depth + 1, min_props=1)]}
        name = f"d{len(self.definitions)}"
        self.definitions[name] = self.object(depth + 1)
        return {"$ref": f"#/definitions/{name}"}

    def object(self, depth: int, min_props: int = 0) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "object"}
        n = self.rng.randrange(min_props, 4)
        if n:
            keys = self.rng.sample(KEYS, n)
            s["properties"] = {k: self.schema(depth + 1) for k in keys}
            if self.chance(30):
                s["required"] = keys[:1]
        if self.chance(20):
            s["additionalProperties"] = self.rng.choice([True, False, {"type": "string"}])
        if self.chance(15) and "properties" in s:
            del s["type"]  # typed by its properties
        return s

    def root(self) -> dict[str, Any]:
        self.definitions = {}
        s = self.schema()
        if self.definitions:
            s = dict(s)
            s["definitions"] = self.definitions
        return s


def _path(rng: random.Random, base: str) -> str:
    out = base
    for _ in range(rng.randrange(0, 3)):
        r = rng.randrange(10)
        if r < 7:
            out += "." + rng.choice(KEYS)
        elif r < 9:
            out += f"[{rng.randrange(2)}]"
        else:
            out += "[_]"
    return out


def _expr(rng: random.Random, base: str, n: int) -> list[str]:
    """One to three expressions reading ``base``'s document."""
    p = _path(rng, base)
    forms = [
        f"{p} == 1",
        f'{p} == "x"',
        f"count({p}) > 0",
        f"upper({p}) == \"A\"",
        f"{p} + 1 > 2",
        f"x{n} := {p}\n\tx{n}.{rng.choice(KEYS)} == 1",
        f"some v{n} in {p}\n\tv{n} == 1",
        f"some i{n}\n\t{p}[i{n}] == true",
        f"y{n} := [z | z := {p}[_]]\n\tcount(y{n}) == 1",
        f"not {p}",
        f"is_string({p})",
        f"startswith({p}, \"a\")",
        f"{p}",
    ]
    return [rng.choice(forms)]


def schema_program(seed: int) -> str:
    rng = random.Random(seed)
    g = SchemaGen(rng)
    out: list[str] = []
    pkg_scope = rng.randrange(100) < 25
    targets = ["input"] * 4 + ["input." + rng.choice(KEYS)] * 2 + ["data.ext"] * 2 + ["data.ext." + rng.choice(KEYS)]

    def block(scope: str | None, entries: list[tuple[str, Any]]) -> list[str]:
        lines = ["# METADATA"]
        if scope:
            lines.append(f"# scope: {scope}")
        lines.append("# schemas:")
        for path, schema in entries:
            lines.append(f"#   - {path}: {json.dumps(schema)}")
        return lines

    if pkg_scope:
        out += block(rng.choice(["package", "subpackages"]), [(rng.choice(targets), g.root())])
    out += ["package p", ""]
    for i in range(rng.randrange(1, 4)):
        entries = [(rng.choice(targets), g.root()) for _ in range(rng.randrange(1, 3))] if rng.randrange(100) < 75 else []
        if entries:
            out += block("document" if rng.randrange(100) < 15 else None, entries)
        base = entries[0][0] if entries and rng.randrange(100) < 80 else rng.choice(targets)
        body = _expr(rng, base, 2 * i) + (_expr(rng, rng.choice(targets), 2 * i + 1) if rng.randrange(100) < 40 else [])
        out.append(f"r{i} if {{\n\t" + "\n\t".join(body) + "\n}")
        out.append("")
    out.append("m := rego.metadata.rule()")
    return "\n".join(out) + "\n"
