"""The builtin catalogue: ``docs/builtins.md`` is generated from the registry.

``python -m pyrego.builtins.catalog [CAPABILITIES.json]`` prints the Markdown
table: every builtin OPA's capabilities file lists, its signature (rendered
from the capabilities file's type declarations), the pyrego module (category)
that implements it, its arity, a one-sentence description (from
:mod:`.descriptions`) and any builtin pyrego lacks. A test checks that the
checked-in table is what this prints.

``python -m pyrego.builtins.catalog --table`` prints :mod:`.table` (one
record per builtin: the module that registers it and OPA's flags for it),
from the modules' registrations and OPA's capabilities file; a test checks
the checked-in file is what this prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pyrego.builtins.descriptions import DESCRIPTIONS
from pyrego.builtins.registry import all_builtins

NOTATION = [
    "Signatures are OPA's type declarations, written compactly:",
    "",
    "- `(A, B) → R` takes arguments of types `A` and `B` and returns an `R`; a signature without `→`",
    "  returns nothing, and `any...` stands for any number of arguments;",
    "- `null`, `boolean`, `number` and `string` are the scalar types, and `any` is any value;",
    "- `any<A, B>` is a value of type `A` or of type `B`;",
    "- `array[T]` and `set[T]` hold elements of type `T`; `object[K: V]` has keys of type `K` and values of type `V`;",
    "- `[A, B]` is an array of exactly two elements, of types `A` and `B` in that order;",
    "- `{\"k\": T}` is an object whose key `\"k\"` holds a `T`; `[K]: V` in it describes its other keys.",
]


def _category(fn: Any) -> str:
    module = getattr(fn, "__module__", "") or ""
    name = module.rsplit(".", 1)[-1].rstrip("_")
    return name


def render_type(decl: dict[str, Any]) -> str:
    """A capabilities-file type declaration in the notation of :data:`NOTATION`."""
    kind = decl.get("type", "any")
    if kind == "any":
        of = decl.get("of")
        members = of if isinstance(of, list) else [of] if of else []
        if not members:
            return "any"
        if len(members) == 1:
            return render_type(members[0])
        return "any<" + ", ".join(render_type(m) for m in members) + ">"
    if kind == "array":
        dynamic = decl.get("dynamic")
        static = [render_type(t) for t in decl.get("static") or []]
        if not static:
            return f"array[{render_type(dynamic) if dynamic else 'any'}]"
        if dynamic:
            static.append(render_type(dynamic) + "...")
        return "[" + ", ".join(static) + "]"
    if kind == "set":
        of = decl.get("of")
        return f"set[{render_type(of) if of else 'any'}]"
    if kind == "object":
        dynamic = decl.get("dynamic")
        fields = [f'"{f["key"]}": {render_type(f["value"])}' for f in decl.get("static") or []]
        if not fields:
            if not dynamic:
                return "object"
            return f"object[{render_type(dynamic['key'])}: {render_type(dynamic['value'])}]"
        if dynamic:
            fields.append(f"[{render_type(dynamic['key'])}]: {render_type(dynamic['value'])}")
        return "{" + ", ".join(fields) + "}"
    if kind == "function":
        args = [render_type(a) for a in decl.get("args") or []]
        if decl.get("variadic"):
            args.append(render_type(decl["variadic"]) + "...")
        signature = "(" + ", ".join(args) + ")"
        if "result" in decl:
            signature += " → " + render_type(decl["result"])
        return signature
    return str(kind)


def _declarations(capabilities: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(capabilities.read_text())
    return {b["name"]: b.get("decl", {}) for b in data["builtins"]}


def opa_builtins(capabilities: Path) -> dict[str, int]:
    """Builtin name -> arity, from an OPA capabilities file."""
    return {name: len(decl.get("args", [])) for name, decl in _declarations(capabilities).items()}


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a literal ``|`` would end the cell)."""
    return text.replace("|", "\\|")


def render(capabilities: Path) -> str:
    registry = all_builtins()
    declarations = _declarations(capabilities)
    wanted = opa_builtins(capabilities)
    rows = []
    missing = []
    for name in sorted(wanted):
        b = registry.get(name)
        signature = _cell(f"`{render_type(declarations[name])}`")
        description = _cell(DESCRIPTIONS.get(name, ""))
        if b is None:
            missing.append(name)
            rows.append(f"| `{name}` | {signature} | — | {wanted[name]} | no | {description} |")
        else:
            rows.append(f"| `{name}` | {signature} | {_category(b.fn)} | {b.arity} | yes | {description} |")
    extra = sorted(set(registry) - set(wanted))
    out = [
        "# Builtins",
        "",
        "Generated from pyrego's builtin registry by `python -m pyrego.builtins.catalog`;",
        "a test keeps it in step with the registry and OPA v1.20.2's capabilities file.",
        "",
        f"OPA v1.20.2 lists {len(wanted)} builtins; pyrego implements {len(wanted) - len(missing)}.",
        "`assign`, `eq`, `print` and `internal.print` are language constructs that the",
        "code generator compiles directly (module `language`).",
        "A builtin error (\"is an error\" below) makes the expression undefined, or ends",
        "the evaluation when strict builtin errors are on.",
        "",
        *NOTATION,
        "",
        "| builtin | signature | category (module) | arity | in pyrego | description |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
    ]
    if missing:
        out += ["", "Missing: " + ", ".join(f"`{m}`" for m in missing)]
    if extra:
        out += ["", "pyrego-only builtins: " + ", ".join(f"`{m}`" for m in extra)]
    return "\n".join(out) + "\n"


#: OPA's facts about a builtin that the table records (the capabilities file's keys).
TABLE_FLAGS = ("deprecated", "nondeterministic", "relation")


def table_source() -> str:
    """The text of :mod:`pyrego.builtins.table`: each builtin's module, from
    what the modules register (every module of the package is imported), and
    its flags, from OPA v1.20.2's capabilities file."""
    import importlib
    import pkgutil

    from pyrego import builtins as package
    from pyrego.builtins.registry import declared_builtins
    from pyrego.capabilities import CURRENT_VERSION, load_version

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    prefix = package.__name__ + "."
    modules = {name: module.removeprefix(prefix) for name, module in declared_builtins().items()}
    opa = {b["name"]: b for b in load_version(CURRENT_VERSION)["builtins"]}

    def record(name: str) -> str:
        facts = [modules[name], *(flag for flag in TABLE_FLAGS if opa.get(name, {}).get(flag))]
        text = ", ".join(json.dumps(f) for f in facts)
        return f"    {json.dumps(name)}: ({text}{',' if len(facts) == 1 else ''}),"

    lines = [
        '"""One record per builtin, by OPA name: the module of :mod:`pyrego.builtins`',
        "that registers it, then OPA's flags for it (``deprecated``: not callable in",
        "Rego v1 modules nor in strict mode; ``nondeterministic``: never folded at",
        "compile time; ``relation``: returns its results one by one).",
        "",
        ":func:`pyrego.builtins.registry.lookup` imports a builtin's module the first",
        "time the builtin is asked for, and the ``@builtin`` decorator takes the flags",
        "from here. Generated by ``python -m pyrego.builtins.catalog --table`` from the",
        "modules' registrations and OPA v1.20.2's capabilities file; do not edit (a",
        "test checks it is what that prints). The builtin's type is in",
        ":mod:`pyrego.typecheck.signatures_data` and its description in",
        ":mod:`pyrego.builtins.descriptions` (tests check both cover every builtin).",
        '"""',
        "",
        "# fmt: off",
        "BUILTINS: dict[str, tuple[str, ...]] = {",
        *(record(name) for name in sorted(modules)),
        "}",
        "# fmt: on",
        "",
        "MODULES: dict[str, str] = {name: facts[0] for name, facts in BUILTINS.items()}",
        'DEPRECATED: frozenset[str] = frozenset(name for name, facts in BUILTINS.items() if "deprecated" in facts)',
        'NONDETERMINISTIC: frozenset[str] = frozenset(name for name, facts in BUILTINS.items() if "nondeterministic" in facts)',
        'RELATION: frozenset[str] = frozenset(name for name, facts in BUILTINS.items() if "relation" in facts)',
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--table"]:
        sys.stdout.write(table_source())
        return 0
    default = Path(__file__).resolve().parents[3].parent / "shared" / "opa" / "capabilities-v1.20.2.json"
    path = Path(args[0]) if args else default
    sys.stdout.write(render(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
