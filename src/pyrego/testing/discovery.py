"""Finding tests as ``opa test`` does: load the files, parse them, pick the ``test_`` rules.

Every path is loaded as ``pyrego eval -d`` loads it (:mod:`pyrego.loader`):
``.rego`` files are modules, ``.json``/``.yaml``/``.yml`` files are data
mounted at the path of their folder. A test is a rule whose name (the first
part of its head's ground ref that starts with one) starts with ``test_``;
``todo_test_`` marks a test to skip. Two rules with the same test name are two
tests, as in OPA: the second is renamed ``test_x#01``, the third
``test_x#02``, and each is evaluated on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.errors import Location, RegoError

TEST_PREFIX = "test_"
SKIP_PREFIX = "todo_test_"


@dataclass(frozen=True)
class TestCase:
    """A test rule found in a module."""

    __test__ = False  # not a pytest class

    package: str  # "data.authz"
    name: str  # "test_allow", "a.test_b", "test_allow#01"
    path: tuple[str, ...]  # the document the test defines, under data
    location: Location
    skip: bool  # a todo_test_ rule
    parameterized: bool  # the head's ref goes on past the name with variables: one case per key
    function: bool  # test_f(x): not a document (an error, as in OPA)
    module_file: str

    @property
    def full_name(self) -> str:
        return f"{self.package}.{self.name}"


class LoadFailure(Exception):
    """Policies or data that could not be loaded or compiled (``opa test`` exits 1)."""

    def __init__(self, errors: Sequence[RegoError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


@dataclass
class LoadedSuite:
    """The parsed modules (tests renamed where names repeat), data documents and the tests found."""

    modules: dict[str, tuple[str, ast.Module]]
    data: list[dict[str, Any]]
    tests: list[TestCase]


def load_suite(
    paths: Iterable[str | Path],
    *,
    ignore: Sequence[str] = (),
    v0_compatible: bool = False,
    max_errors: int = 10,
    bundle_mode: bool = False,
    verification: Any = None,
    skip_verify: bool = False,
) -> LoadedSuite:
    """Read and parse everything under ``paths`` and find the tests; raises :class:`LoadFailure`.

    ``bundle_mode`` (``opa test -b``) reads each path as a bundle folder or
    archive (a ``.tar.gz`` path always is one), checked with ``verification``
    (a :class:`~pyrego.bundle.signing.VerificationConfig`); a bundle that
    cannot be read raises :class:`~pyrego.bundle.model.BundleError`."""
    from pyrego.loader import data_document, iter_files, read_policy, split_prefix
    from pyrego.parse.parser import parse_module

    texts: dict[str, str] = {}
    data: list[dict[str, Any]] = []
    errors: list[RegoError] = []
    bundled: dict[str, tuple[str, ast.Module]] = {}
    for raw in paths:
        if bundle_mode or str(raw).endswith((".tar.gz", ".tgz")):
            from pyrego.bundle.reader import read_bundle

            try:
                b = read_bundle(str(raw), verification=verification, skip_verify=skip_verify, rego_v1=not v0_compatible)
            except RegoError as err:
                errors.append(err)
                continue
            for module_name, text in b.modules.items():
                bundled[module_name] = (text, b.parsed[module_name])
            if b.data:
                data.append(b.data)
            continue
        prefix, name = split_prefix(str(raw))
        for file in iter_files(Path(name), prefix, ignore=ignore):
            try:
                if file.is_policy:
                    texts[file.name] = read_policy(file)
                else:
                    data.append(data_document(file))
            except RegoError as err:
                errors.append(err)
    modules: dict[str, tuple[str, ast.Module]] = dict(bundled)
    for file_name in sorted(texts):
        text = texts[file_name]
        try:
            modules[file_name] = (text, parse_module(text, file_name, rego_v1=not v0_compatible))
        except RegoError as err:
            errors.append(err)
    if errors:
        raise LoadFailure(errors[:max_errors] if max_errors > 0 else errors)
    renamed, tests = find_tests(modules)
    return LoadedSuite(renamed, data, tests)


def find_tests(
    modules: dict[str, tuple[str, ast.Module]],
) -> tuple[dict[str, tuple[str, ast.Module]], list[TestCase]]:
    """The tests of ``modules`` (sorted by file, then in rule order), and the modules
    with repeated test names renamed (``test_x#01``) so each rule is its own document."""
    seen: dict[tuple[str, ...], int] = {}
    out_modules: dict[str, tuple[str, ast.Module]] = {}
    tests: list[TestCase] = []
    for file_name in sorted(modules):
        text, module = modules[file_name]
        package_keys = _package_keys(module)
        package = ast.ref_to_string(module.package)
        rules = list(module.rules)
        changed = False
        for i, rule in enumerate(rules):
            found = find_test_name(rule)
            if found is None:
                continue
            name_index, name = found
            ground = _ground_keys(rule)[: name_index + 1]
            key = package_keys + tuple(ground)
            count = seen.get(key, 0)
            seen[key] = count + 1
            if count and name.startswith(TEST_PREFIX):
                # OPA renames each repeated test (todo_ ones are never run, so never renamed).
                name = f"{name}#{count:02d}"
                ground[name_index] = name
                rule = _renamed(rule, name_index, name)
                rules[i] = rule
                changed = True
            head = rule.head
            suffix = _ref_terms(head.ref)[name_index + 1 :]
            tests.append(
                TestCase(
                    package=package,
                    name=_name_text(ground[: name_index + 1]),
                    path=package_keys + tuple(ground[: name_index + 1]),
                    location=rule.location,
                    skip=name.startswith(SKIP_PREFIX),
                    parameterized=head.args is None and any(not _is_ground(t) for t in suffix),
                    function=head.args is not None,
                    module_file=file_name,
                )
            )
        out_modules[file_name] = (text, dataclasses.replace(module, rules=tuple(rules)) if changed else module)
    return out_modules, tests


def _package_keys(module: ast.Module) -> tuple[str, ...]:
    return tuple(str(p.value) for p in module.package.path if isinstance(p, ast.Scalar))


def _ref_terms(ref: ast.Ref) -> list[ast.Term]:
    return [ref.head, *ref.path]


def _ground_keys(rule: ast.Rule) -> list[str]:
    """The names of the head ref's leading ground terms (``""`` for a non-string one)."""
    keys: list[str] = []
    for term in _ref_terms(rule.head.ref):
        if type(term) is ast.Var and not keys:
            keys.append(term.name)
        elif type(term) is ast.Scalar:
            keys.append(term.value if type(term.value) is str else "")
        else:
            break
    return keys


def find_test_name(rule: ast.Rule) -> tuple[int, str] | None:
    """The position and name of the first ground head-ref part named like a test, if any."""
    for i, key in enumerate(_ground_keys(rule)):
        if key.startswith(TEST_PREFIX) or key.startswith(SKIP_PREFIX):
            return i, key
    return None


def _is_ground(term: ast.Term) -> bool:
    if type(term) is ast.Scalar:
        return True
    if type(term) is ast.Array or type(term) is ast.SetTerm:
        return all(_is_ground(t) for t in term.items)
    if type(term) is ast.Object:
        return all(_is_ground(k) and _is_ground(v) for k, v in term.items)
    return False


def _name_text(keys: list[str]) -> str:
    """``a.test_b`` / ``test_x#01``: the test's ref as OPA prints it."""
    out = keys[0]
    for key in keys[1:]:
        out += f".{key}" if key.isidentifier() else "[" + _quote(key) + "]"
    return out


def _quote(s: str) -> str:
    import json

    return json.dumps(s, ensure_ascii=False)


def _renamed(rule: ast.Rule, index: int, name: str) -> ast.Rule:
    """``rule`` (and its else branches) with head-ref part ``index`` renamed to ``name``."""
    ref = rule.head.ref
    if index == 0:
        assert isinstance(ref.head, ast.Var)
        new_ref = ast.Ref(ast.Var(name, ref.head.location), ref.path, ref.location)
    else:
        path = list(ref.path)
        old = path[index - 1]
        path[index - 1] = ast.Scalar(name, getattr(old, "location", ast.NO_LOCATION))
        new_ref = ast.Ref(ref.head, tuple(path), ref.location)
    head = dataclasses.replace(rule.head, ref=new_ref)
    else_ = _renamed(rule.else_, index, name) if rule.else_ is not None else None
    return dataclasses.replace(rule, head=head, else_=else_)
