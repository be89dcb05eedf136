"""Policy repositories (tests/repos/*): their own Rego tests, in pyrego and in OPA.

Each folder directly under ``tests/repos/`` is a policy repository laid out as
kept in git: packages split across files, shared libraries imported under
aliases, data files mounted at the path of their folder (``roles/data.json``
is ``data.roles``), and ``*_test.rego`` files whose ``test_*`` rules must all
be true. A file ``REGO_VERSION`` holding ``v0`` at a repository's root means
that its policies are written in Rego v0.

A repository is loaded with :meth:`pyrego.Engine.add_policies_from_dir`, and
every test rule is evaluated with strict builtin errors in each execution
form pyrego has: rule definitions as closures (a cold program), compact
generated code, and the fast form. It must be true in each.

The same files go to OPA (:mod:`opa_oracle`), which must say true too (the
corpus itself is right) and must agree with pyrego: the same value, or
undefined, or an error with the same code. That comparison is skipped when
the oracle cannot be had, and for Rego v0 repositories, since the oracle
parses Rego v1 only. The command line loads each repository once more, with
``pyrego eval -d``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import pyrego
from conftest import EXECUTION_FORMS, in_form
from pyrego.conformance import canonical

REPO_ROOT = Path(__file__).resolve().parent.parent
REPOS_DIR = Path(__file__).resolve().parent / "repos"
DATA_SUFFIXES = (".json", ".yaml", ".yml")

_PACKAGE_RX = re.compile(r"^package\s+([\w.]+)", re.M)
# A test is a rule (not a function) whose name starts with test_.
_TEST_RX = re.compile(r"^(test_\w+)(?![\w(\[.])", re.M)

Outcome = tuple[str, Any]  # ("value", canonical value) | ("undefined", None) | ("error", code)


@dataclass(frozen=True)
class TestRule:
    """One ``test_*`` rule of a repository."""

    __test__ = False  # not a pytest class

    repo: str
    package: str
    name: str

    @property
    def ref(self) -> str:
        return f"data.{self.package}.{self.name}"

    @property
    def id(self) -> str:
        return f"{self.repo}/{self.package}/{self.name}"


def repositories() -> list[Path]:
    if not REPOS_DIR.is_dir():
        return []
    return sorted(p for p in REPOS_DIR.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def is_v0(repo: Path) -> bool:
    marker = repo / "REGO_VERSION"
    return marker.is_file() and marker.read_text(encoding="utf-8").strip() == "v0"


def rego_tests(repo: Path) -> list[TestRule]:
    """The test rules of ``repo``'s .rego files, in file order, each once."""
    found: dict[TestRule, None] = {}
    for path in sorted(repo.rglob("*.rego")):
        text = path.read_text(encoding="utf-8")
        package = _PACKAGE_RX.search(text)
        if package is None:
            continue
        for m in _TEST_RX.finditer(text):
            found[TestRule(repo.name, package.group(1), m.group(1))] = None
    return list(found)


ALL_TESTS: list[TestRule] = [t for repo in repositories() for t in rego_tests(repo)]


# ---------------------------------------------------------------- pyrego


def load_engine(repo: Path) -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.set_rego_v0(is_v0(repo))
    engine.set_strict_builtin_errors(True)  # as the OPA oracle evaluates
    engine.add_policies_from_dir(repo)
    return engine


def _sortable(v: Any) -> Any:
    """A JSON-like copy of an evaluation result: sets become sorted arrays, as OPA prints them."""
    if isinstance(v, (set, frozenset)):
        return sorted((_sortable(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True, default=str))
    if isinstance(v, (list, tuple)):
        return [_sortable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _sortable(x) for k, x in v.items()}
    return v


def _value(v: Any) -> Outcome:
    return ("undefined", None) if v is pyrego.UNDEFINED else ("value", canonical(_sortable(v)))


_PYREGO: dict[tuple[str, str], dict[str, tuple[Outcome, str]]] = {}


def pyrego_outcomes(repo: Path, form: str) -> dict[str, tuple[Outcome, str]]:
    """ref -> (outcome, error message) for every test rule of ``repo``, run in ``form``."""
    key = (repo.name, form)
    if key not in _PYREGO:
        results: dict[str, tuple[Outcome, str]] = {}
        with in_form(form, stay_cold=True):  # one program for all of a repository's tests: the cold forms must not turn hot
            try:
                engine: pyrego.Engine | None = load_engine(repo)
                load_error: tuple[Outcome, str] | None = None
            except pyrego.RegoError as exc:
                engine, load_error = None, (("error", exc.code), str(exc))
            for t in rego_tests(repo):
                if engine is None:
                    assert load_error is not None
                    results[t.ref] = load_error
                    continue
                try:
                    results[t.ref] = (_value(engine.eval_rule(t.ref)), "")
                except pyrego.RegoError as exc:
                    results[t.ref] = (("error", exc.code), str(exc))
        _PYREGO[key] = results
    return _PYREGO[key]


# ---------------------------------------------------------------- OPA


class _JsonYamlLoader(yaml.SafeLoader):
    """YAML as OPA reads it (through JSON): timestamps stay strings."""


_JsonYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _deep_merge(into: dict[str, Any], doc: dict[str, Any]) -> None:
    for k, v in doc.items():
        if isinstance(into.get(k), dict) and isinstance(v, dict):
            _deep_merge(into[k], v)
        else:
            into[k] = v


def opa_inputs(repo: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """The modules (named by path relative to ``repo``) and the data document, as ``opa eval -d repo`` loads them."""
    modules: dict[str, str] = {}
    data: dict[str, Any] = {}
    for path in sorted(p for p in repo.rglob("*") if p.is_file()):
        rel = path.relative_to(repo)
        if path.suffix == ".rego":
            modules[rel.as_posix()] = path.read_text(encoding="utf-8")
        elif path.suffix in DATA_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            doc = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_JsonYamlLoader)
            for part in reversed(rel.parent.parts):
                doc = {part: doc}
            _deep_merge(data, doc)
    return modules, data


_OPA: dict[str, dict[str, tuple[Outcome, str]]] = {}


def opa_outcomes(oracle: Any, repo: Path) -> dict[str, tuple[Outcome, str]]:
    """ref -> (outcome, error message) for every test rule of ``repo``, in OPA."""
    if repo.name not in _OPA:
        modules, data = opa_inputs(repo)
        tests = rego_tests(repo)
        results: dict[str, tuple[Outcome, str]] = {}
        # All at once (each ref an entry when defined); one by one when that fails.
        entries = ", ".join(f"{{{json.dumps(t.ref)}: v | v := {t.ref}}}" for t in tests)
        together = oracle.evaluate(modules, f"x := object.union_n([{entries}])", data=data)
        if not together.is_error and together.bindings:
            values = together.bindings[0]["x"]
            for t in tests:
                defined = t.ref in values
                results[t.ref] = (("value", canonical(values[t.ref])) if defined else ("undefined", None), "")
            _OPA[repo.name] = results
            return results
        for t in tests:
            r = oracle.evaluate(modules, f"x := {t.ref}", data=data)
            if r.is_error:
                results[t.ref] = (("error", r.error_code), r.error_message or "")
            elif not r.bindings:
                results[t.ref] = (("undefined", None), "")
            else:
                results[t.ref] = (("value", canonical(r.bindings[0]["x"])), "")
        _OPA[repo.name] = results
    return _OPA[repo.name]


# ---------------------------------------------------------------- tests

TRUE: Outcome = ("value", canonical(True))


def _show(outcome: tuple[Outcome, str]) -> str:
    (kind, value), message = outcome
    if kind == "error":
        return f"error {value}: {' '.join(message.split())[:600]}"
    return "undefined" if kind == "undefined" else f"value {value}"


def test_every_repository_has_tests() -> None:
    assert repositories(), f"no repositories in {REPOS_DIR}"
    for repo in repositories():
        assert rego_tests(repo), f"{repo.name}: no test rules"


@pytest.mark.parametrize("form", EXECUTION_FORMS)
@pytest.mark.parametrize("test", ALL_TESTS, ids=[t.id for t in ALL_TESTS])
def test_rule_is_true_in_pyrego(test: TestRule, form: str) -> None:
    got = pyrego_outcomes(REPOS_DIR / test.repo, form)[test.ref]
    assert got[0] == TRUE, f"{test.ref} in the {form} form: {_show(got)}"


@pytest.mark.parametrize("test", ALL_TESTS, ids=[t.id for t in ALL_TESTS])
def test_rule_agrees_with_opa(test: TestRule, oracle: Any) -> None:
    repo = REPOS_DIR / test.repo
    if is_v0(repo):
        pytest.skip("the OPA oracle parses Rego v1 only; this repository is Rego v0")
    want = opa_outcomes(oracle, repo)[test.ref]
    assert want[0] == TRUE, f"the corpus is wrong: OPA says {test.ref} is {_show(want)}"
    got = pyrego_outcomes(repo, "closures")[test.ref]
    assert got[0] == want[0], f"{test.ref}: OPA {_show(want)}, pyrego {_show(got)}"


@pytest.mark.parametrize("repo", repositories(), ids=[r.name for r in repositories()])
def test_cli_loads_the_repository(repo: Path) -> None:
    tests = rego_tests(repo)
    picked = [tests[0], tests[len(tests) // 2], tests[-1]]
    query = "[" + ", ".join(t.ref for t in picked) + "]"
    args = ["eval", "-d", str(repo.relative_to(REPO_ROOT)), "--strict-builtin-errors", "-f", "raw"]
    if is_v0(repo):
        args.append("--v0-compatible")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", *args, query],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == [True, True, True], f"{query}: {proc.stdout}"
