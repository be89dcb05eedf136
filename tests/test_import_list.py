"""What starting pyrego imports: ``import pyrego``, ``from pyrego import Engine``,
``pyrego version`` and an evaluation that calls no crypto or YAML builtin load
only the modules listed here (a list, not a timing: a new import on these
paths shows up as a test failure, whatever the machine's speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")

#: Third-party (and slow standard) modules none of the paths below may load.
HEAVY = ("cryptography", "yaml", "jsonschema", "graphql", "re2", "rich", "http.client", "ssl", "email", "importlib.metadata")

#: What ``from pyrego import Engine`` may load: the engine, the compile
#: pipeline and the runtime, with the builtins' registry and the few builtin
#: modules the runtime itself uses (sprintf's value text, rego.metadata).
ENGINE_MODULES = {
    "pyrego",
    "pyrego.version",
    "pyrego.queries",
    "pyrego.parse.spans",
    "pyrego.compile.ground",
    "pyrego.codegen.program",
    "pyrego.ast",
    "pyrego.ast.nodes",
    "pyrego.codegen.bounded",
    "pyrego.codegen.python_ast",
    "pyrego.builtins",
    "pyrego.builtins._goutil",
    "pyrego.builtins.limits",
    "pyrego.builtins.registry",
    "pyrego.builtins.rego",
    "pyrego.builtins.sprintf",
    "pyrego.builtins.sprintf_float",
    "pyrego.builtins.table",
    "pyrego.builtins.types",
    "pyrego.codegen",
    "pyrego.codegen.body",
    "pyrego.codegen.build_cache",
    "pyrego.codegen.closure_terms",
    "pyrego.codegen.closures",
    "pyrego.codegen.comprehensions",
    "pyrego.codegen.deferred",
    "pyrego.codegen.disk_cache",
    "pyrego.codegen.docs",
    "pyrego.codegen.set_members",
    "pyrego.codegen.generator",
    "pyrego.codegen.lines",
    "pyrego.codegen.strict_blocks",
    "pyrego.codegen.key_order",
    "pyrego.codegen.rule_calls",
    "pyrego.codegen.rule_values",
    "pyrego.codegen.tiers",
    "pyrego.compile",
    "pyrego.compile.base",
    "pyrego.compile.checks",
    "pyrego.compile.compiler",
    "pyrego.compile.eval_order",
    "pyrego.compile.graph",
    "pyrego.compile.head_terms",
    "pyrego.compile.index_guards",
    "pyrego.compile.index_order",
    "pyrego.compile.local_vars",
    "pyrego.compile.opa_form",
    "pyrego.compile.optimize",
    "pyrego.compile.pipeline",
    "pyrego.compile.resolver",
    "pyrego.compile.rewrite",
    "pyrego.compile.rule_checks",
    "pyrego.compile.rule_conflicts",
    "pyrego.compile.rule_index",
    "pyrego.compile.safety",
    "pyrego.compile.body_order",
    "pyrego.compile.with_checks",
    "pyrego.compile.with_targets",
    "pyrego.compile.with_values",
    "pyrego.engine",
    "pyrego.engine_config",
    "pyrego.engine_support",
    "pyrego.errors",
    "pyrego.go_base64",
    "pyrego.instrument",
    "pyrego.instrument.engine_mixin",
    "pyrego.instrument.spans",
    "pyrego.loader",
    "pyrego.parse",
    "pyrego.parse.exprs",
    "pyrego.parse.imports",
    "pyrego.parse.lexer",
    "pyrego.parse.logic",
    "pyrego.parse.nodes",
    "pyrego.parse.parser",
    "pyrego.parse.terms",
    "pyrego.parse.tokens",
    "pyrego.runtime",
    "pyrego.runtime.bigfloat",
    "pyrego.runtime.bigint",
    "pyrego.runtime.budget",
    "pyrego.runtime.builtin_errors",
    "pyrego.runtime.context",
    "pyrego.runtime.convert",
    "pyrego.runtime.definitions",
    "pyrego.runtime.docs",
    "pyrego.runtime.members",
    "pyrego.runtime.helpers",
    "pyrego.runtime.numbers",
    "pyrego.runtime.values",
    "pyrego.runtime.withs",
}

#: Heavy modules ``from pyrego import Engine`` may load: none (PyYAML comes
#: with the first policy that has a METADATA block, the instrumentation with
#: the first coverage or trace).
ENGINE_HEAVY_ALLOWED: set[str] = set()


def _loaded(code: str) -> list[str]:
    """``sys.modules`` after running ``code`` in a fresh interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYREGO_CACHE_DIR", None)
    script = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _heavy(modules: list[str], allowed: set[str] | frozenset[str] = frozenset()) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY if h not in allowed)]


def _pyrego(modules: list[str]) -> set[str]:
    return {m for m in modules if m == "pyrego" or m.startswith("pyrego.")}


def test_import_pyrego_loads_only_the_package() -> None:
    modules = _loaded("import pyrego\nassert pyrego.__version__")
    assert _pyrego(modules) == {"pyrego", "pyrego.version"}
    assert _heavy(modules) == []


def test_engine_import_list() -> None:
    modules = _loaded("from pyrego import Engine")
    extra = _pyrego(modules) - ENGINE_MODULES
    assert not extra, f"from pyrego import Engine loads modules beyond the list: {sorted(extra)}"
    assert _heavy(modules, ENGINE_HEAVY_ALLOWED) == []


def test_cli_version_loads_no_engine() -> None:
    modules = _loaded("from pyrego.cli import main\nmain(['version'])")
    assert _pyrego(modules) <= {"pyrego", "pyrego.version", "pyrego.cli", "pyrego.cli.version_cmd"}
    assert "typing" not in modules
    assert _heavy(modules) == []


def test_cli_help_loads_no_subcommand() -> None:
    modules = _loaded("from pyrego.cli import main\nmain([])")
    assert not {m for m in _pyrego(modules) if m.endswith("_cmd")}
    assert _heavy(modules) == []


def test_evaluation_loads_only_the_builtins_it_calls() -> None:
    policy = (
        "package p\n\n"
        'allow if {\n\tcount(input.roles) > 0\n\tstartswith(input.user, "a")\n\tsprintf("%v", [input.user]) == "alice"\n}\n'
    )
    code = (
        "from pyrego import Engine\n"
        "e = Engine()\n"
        f"e.add_policy('p.rego', {policy!r})\n"
        "e.set_input({'user': 'alice', 'roles': ['admin']})\n"
        "assert e.eval_rule('data.p.allow') is True\n"
    )
    modules = _loaded(code)
    assert _heavy(modules, ENGINE_HEAVY_ALLOWED) == []
    for category in ("crypto", "jwt", "jwk", "x509", "encoding_yaml", "jsonschema_", "graphql", "http", "regex", "glob", "net"):
        assert f"pyrego.builtins.{category}" not in modules


def test_cli_help_lines_match_the_subcommands() -> None:
    """:data:`pyrego.cli.HELP` is what each subcommand's ``register`` says."""
    import argparse

    from pyrego.cli import COMMANDS, HELP, build_parser

    full = build_parser()
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert {name: helps[name] for name in HELP} == HELP
    assert list(HELP) == [name.removesuffix("_cmd") for name in COMMANDS]
    for command in ["", *HELP]:  # one command's full parser (or none), the others' help lines: the same --help
        assert build_parser(command).format_help() == full.format_help()


def test_version_is_the_distribution_version() -> None:
    from importlib.metadata import version

    import pyrego

    assert pyrego.__version__ == version("pyrego")
