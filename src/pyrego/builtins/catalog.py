"""The builtin catalogue: ``docs/builtins.md`` is generated from the registry.

``python -m pyrego.builtins.catalog [CAPABILITIES.json]`` prints the Markdown
table: every builtin OPA's capabilities file lists, the pyrego module
(category) that implements it and its arity, and any builtin pyrego lacks.
A test checks that the checked-in table is what this prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .registry import all_builtins


def _category(fn: Any) -> str:
    module = getattr(fn, "__module__", "") or ""
    name = module.rsplit(".", 1)[-1].rstrip("_")
    return name


def opa_builtins(capabilities: Path) -> dict[str, int]:
    """Builtin name -> arity, from an OPA capabilities file."""
    data = json.loads(capabilities.read_text())
    return {b["name"]: len(b.get("decl", {}).get("args", [])) for b in data["builtins"]}


def render(capabilities: Path) -> str:
    registry = all_builtins()
    wanted = opa_builtins(capabilities)
    rows = []
    missing = []
    for name in sorted(wanted):
        b = registry.get(name)
        if b is None:
            missing.append(name)
            rows.append(f"| `{name}` | — | {wanted[name]} | no |")
        else:
            rows.append(f"| `{name}` | {_category(b.fn)} | {b.arity} | yes |")
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
        "",
        "| builtin | category (module) | arity | in pyrego |",
        "| --- | --- | --- | --- |",
        *rows,
    ]
    if missing:
        out += ["", "Missing: " + ", ".join(f"`{m}`" for m in missing)]
    if extra:
        out += ["", "pyrego-only builtins: " + ", ".join(f"`{m}`" for m in extra)]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    default = Path(__file__).resolve().parents[3].parent / "shared" / "opa" / "capabilities-v1.20.2.json"
    path = Path(args[0]) if args else default
    sys.stdout.write(render(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
