"""The benchmark workloads, loaded from files.

Three workloads, all read from disk so that worker processes can rebuild them:

``seed``
    regorus's engine-evaluation benchmark: 9 policies x 3 inputs from
    ``<shared>/bench/seed``, query ``data.bench.allow``, round-robin over
    policies and inputs.
``allow``
    The same 9 policies with one input each (``allow_inputs`` in the shipped workload)
    written so that evaluation runs through a whole rule body and returns
    ``true`` (the seed inputs mostly fail on a rule's first line).
``aci``
    The Azure Container Instances policy set from ``<shared>/bench/aci``
    (Rego v0, about 2,000 lines), one case per enforcement point, each with
    its own data, input and query, and an expected result.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyrego.conformance import find_shared_dir
from pyrego.yaml_safe import load_yaml

SEED_POLICIES = (
    "api_access",
    "azure_keyvault",
    "azure_nsg",
    "azure_storage",
    "azure_vm",
    "data_processing",
    "data_sensitivity",
    "rbac",
    "time_based",
)
SEED_QUERY = "data.bench.allow"
WORKLOAD_NAMES = ("seed", "allow", "aci")


class WorkloadUnavailable(RuntimeError):
    """The files of a workload could not be found or read."""


class _NoExpectation:
    """Marker: the case has no expected value."""

    def __repr__(self) -> str:
        return "NO_EXPECTATION"


NO_EXPECTATION: Any = _NoExpectation()


@dataclass
class PolicySet:
    """The policies (and data) one engine is prepared with."""

    name: str
    modules: list[tuple[str, str]]
    v0: bool = False
    data: Any = None

    def with_suffix(self, suffix: str) -> list[tuple[str, str]]:
        """The modules with ``suffix`` (a comment line) appended to every text."""
        return [(path, text + suffix) for path, text in self.modules]


@dataclass
class Case:
    """One evaluation: a policy set (by index), a query and an input."""

    label: str
    group: int
    query: str
    input: Any
    input_json: str
    expected: Any = NO_EXPECTATION


@dataclass
class Workload:
    """Policy sets and the cases evaluated against them, in round-robin order."""

    name: str
    title: str
    policy_sets: list[PolicySet]
    cases: list[Case]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Paths:
    """Where the workload files are (picklable, for worker processes)."""

    shared: str | None
    allow_inputs: str | None

    @property
    def seed_dir(self) -> Path | None:
        return Path(self.shared) / "bench" / "seed" if self.shared else None

    @property
    def aci_dir(self) -> Path | None:
        return Path(self.shared) / "bench" / "aci" if self.shared else None


def find_repo_root() -> Path | None:
    """The pyrego repository (a folder with ``pyproject.toml`` and ``src/pyrego``), if any."""
    for base in (Path.cwd(), Path(__file__).resolve().parent):
        for d in (base, *base.parents):
            if (d / "pyproject.toml").is_file() and (d / "src" / "pyrego").is_dir():
                return d
    return None


#: The workload shipped in the package (the seed and ACI policy sets and the
#: allow-path inputs), so that ``pyrego bench`` runs from any directory.
PACKAGED = Path(__file__).resolve().parent / "workload"


def default_paths(shared: str | None = None, allow_inputs: str | None = None) -> Paths:
    """Resolve the workload folder (``--shared``, ``$PYREGO_SHARED``, ``../shared``,
    else the copy shipped in the package) and the allow inputs."""
    shared_dir = Path(shared) if shared else find_shared_dir()
    if shared_dir is None or not (shared_dir / "bench" / "seed").is_dir():
        shared_dir = PACKAGED
    if allow_inputs is None:
        allow_inputs = os.environ.get("PYREGO_BENCH_ALLOW_INPUTS") or str(PACKAGED / "allow_inputs")
    return Paths(str(shared_dir.resolve()), allow_inputs)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorkloadUnavailable(f"cannot read {path}: {exc}") from None


def _case(label: str, group: int, query: str, text: str, expected: Any = NO_EXPECTATION) -> Case:
    value = json.loads(text)
    return Case(label, group, query, value, json.dumps(value), expected)


def load_seed(paths: Paths) -> Workload:
    """The seed workload: 9 policies x 3 inputs, round-robin (policy fastest, then input)."""
    seed = paths.seed_dir
    if seed is None or not (seed / "policies").is_dir():
        raise WorkloadUnavailable("seed workload not found: no <shared>/bench/seed (set --shared or $PYREGO_SHARED)")
    sets = [
        PolicySet(name, [(f"{name}_policy.rego", _read(seed / "policies" / f"{name}_policy.rego"))])
        for name in SEED_POLICIES
    ]
    cases = []
    for n in (1, 2, 3):
        suffix = "" if n == 1 else str(n)
        for i, name in enumerate(SEED_POLICIES):
            text = _read(seed / "inputs" / f"{name}_input{suffix}.json")
            cases.append(_case(f"{name}/input{n}", i, SEED_QUERY, text))
    return Workload("seed", "seed: 9 policies x 3 inputs (regorus engine-evaluation benchmark)", sets, cases)


def load_allow(paths: Paths) -> Workload:
    """The allow-path workload: each seed policy with an input that makes it return true."""
    seed = paths.seed_dir
    if seed is None or not (seed / "policies").is_dir():
        raise WorkloadUnavailable("allow workload needs the seed policies: no <shared>/bench/seed")
    if paths.allow_inputs is None or not Path(paths.allow_inputs).is_dir():
        raise WorkloadUnavailable("allow workload inputs not found (benchmarks/allow_inputs; set --allow-inputs)")
    folder = Path(paths.allow_inputs)
    sets = []
    cases = []
    for i, name in enumerate(SEED_POLICIES):
        sets.append(PolicySet(name, [(f"{name}_policy.rego", _read(seed / "policies" / f"{name}_policy.rego"))]))
        cases.append(_case(f"{name}/allow", i, SEED_QUERY, _read(folder / f"{name}.json"), expected=True))
    notes = [
        "time_based: the first rule body depends on the wall clock (New York business hours), so its "
        "allow input takes the emergency-access body, which returns true at any time of day.",
        "api_access and azure_keyvault compare time.now_ns() with times in the input: the inputs use "
        "2100-01-01 so that the rules hold for the next decades.",
    ]
    return Workload("allow", "allow path: 9 policies, inputs that satisfy a whole rule body", sets, cases, notes)


def load_aci(paths: Paths) -> Workload:
    """The ACI workload: one prepared policy set per case (the cases differ in their data)."""
    aci = paths.aci_dir
    if aci is None or not (aci / "aci.yaml").is_file():
        raise WorkloadUnavailable("ACI workload not found: no <shared>/bench/aci/aci.yaml")
    doc = load_yaml(_read(aci / "aci.yaml"))
    texts: dict[str, str] = {}
    sets: list[PolicySet] = []
    cases: list[Case] = []
    for raw in doc.get("cases") or []:
        modules = []
        for i, module in enumerate(raw["modules"]):
            if module.endswith(".rego") and "\n" not in module:
                if module not in texts:
                    texts[module] = _read(aci / module)
                modules.append((module, texts[module]))
            else:
                modules.append((f"inline-{i}.rego", module))
        note = str(raw.get("note", f"case{len(cases)}")).removeprefix("aci/")
        want = raw.get("want_result")
        expected = want[0]["x"] if want else NO_EXPECTATION
        group = len(sets)
        sets.append(PolicySet(note, modules, v0=True, data=raw.get("data")))
        inp = raw.get("input")
        cases.append(Case(note, group, raw["query"], inp, json.dumps(inp), expected))
    if not cases:
        raise WorkloadUnavailable("ACI workload has no cases")
    lines = sum(t.count("\n") + 1 for t in texts.values())
    return Workload("aci", f"ACI: {len(cases)} cases on a {lines:,}-line Rego v0 policy set", sets, cases)


def load_workload(name: str, paths: Paths) -> Workload:
    """Load the workload called ``name`` (``seed``, ``allow`` or ``aci``)."""
    loaders = {"seed": load_seed, "allow": load_allow, "aci": load_aci}
    if name not in loaders:
        raise WorkloadUnavailable(f"unknown workload {name!r}")
    return loaders[name](paths)


def policy_lines(ps: PolicySet) -> int:
    """The number of lines of Rego in a policy set."""
    return sum(text.count("\n") + 1 for _, text in ps.modules)


__all__ = [
    "SEED_POLICIES",
    "SEED_QUERY",
    "WORKLOAD_NAMES",
    "NO_EXPECTATION",
    "WorkloadUnavailable",
    "PolicySet",
    "Case",
    "Workload",
    "Paths",
    "find_repo_root",
    "default_paths",
    "load_seed",
    "load_allow",
    "load_aci",
    "load_workload",
    "policy_lines",
]
