"""The seed benchmark workload and the ACI policies: pyrego must give OPA's answers.

Seed workload (``../shared/bench/seed``): 9 policies x 3 inputs, query
``data.bench.allow``. The expected values below were derived by reading each
policy against its inputs (the reason is written next to each) and confirmed
with OPA v1.20.2; when the OPA oracle (:mod:`opa_oracle`) is available, the
test also asks OPA again. Because the shipped inputs mostly do not satisfy the
policies (24 of the 27 answers are the ``default allow := false``), the table
adds hand-written inputs that do satisfy each policy, so that an engine that
always returns the default cannot pass. Three policies read ``time.now_ns()``:
their expected values do not depend on the clock (the shipped inputs fail an
earlier condition; the extra inputs compute times relative to now).

ACI (``../shared/bench/aci``): real Azure Container Instances policies in
Rego v0 syntax, 9 cases with expected results in ``aci.yaml``.

Everything here is skipped when the shared folder is absent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import pyrego
from opa_oracle import OracleUnavailable, get_oracle
from pyrego.conformance import load_yaml, results_equal
from shared_material import SHARED_DIR

SEED = SHARED_DIR / "bench" / "seed" if SHARED_DIR is not None else None
ACI = SHARED_DIR / "bench" / "aci" if SHARED_DIR is not None else None
NO_SHARED = "shared test material not found: no ../shared/bench beside the repository and no $PYREGO_SHARED"

POLICIES = [
    "api_access",
    "azure_keyvault",
    "azure_nsg",
    "azure_storage",
    "azure_vm",
    "data_processing",
    "data_sensitivity",
    "rbac",
    "time_based",
]

# (policy, input number) -> (expected allow, why)
SEED_EXPECTED: dict[tuple[str, int], tuple[bool, str]] = {
    **{
        ("api_access", n): (False, "inputs have no user.authenticated, so the only allow body fails")
        for n in (1, 2, 3)
    },
    **{
        ("azure_keyvault", n): (False, "inputs describe input.vault and have no input.operation")
        for n in (1, 2, 3)
    },
    **{
        ("azure_nsg", n): (
            True,
            "first rule: write/Inbound/Allow match; destinationPortRange is a string "
            '("80", "22", "443") so it is not in the numeric dangerous_ports list; the source is '
            'neither "*" nor "Internet"',
        )
        for n in (1, 2, 3)
    },
    **{("azure_storage", n): (False, "inputs have account/container, no input.operation") for n in (1, 2, 3)},
    **{("azure_vm", n): (False, "inputs have input.vm, no input.operation") for n in (1, 2, 3)},
    **{
        ("data_processing", n): (
            False,
            "input.user.attributes is absent so user_clearance_level is undefined (first rule fails), "
            'and input.user.role is not "data_processor" (second rule fails)',
        )
        for n in (1, 2, 3)
    },
    **{
        ("data_sensitivity", n): (False, "inputs have no input.action and no input.user.roles")
        for n in (1, 2, 3)
    },
    **{("rbac", n): (False, 'inputs have user.roles arrays but the policy reads input.user.role == "admin"') for n in (1, 2, 3)},
    **{
        ("time_based", n): (False, "inputs have no user.department and no user.emergency_access")
        for n in (1, 2, 3)
    },
}


def _now_ns() -> int:
    return time.time_ns()


# Inputs written for this test that satisfy (or, in the last entries, narrowly
# miss) each policy: (policy, label, input factory, expected allow, why).
EXTRA_INPUTS: list[tuple[str, str, Any, bool, str]] = [
    ("api_access", "recent-login", lambda: {
        "request": {"method": "GET", "path": "/api/v2/items"},
        "user": {"authenticated": True, "login_time": _now_ns() - 3_600_000_000_000},
    }, True, "GET on a valid prefix, authenticated, logged in an hour ago"),
    ("api_access", "stale-login", lambda: {
        "request": {"method": "GET", "path": "/api/v2/items"},
        "user": {"authenticated": True, "login_time": _now_ns() - 2 * 86_400_000_000_000},
    }, False, "login two days ago is older than 24 hours"),
    ("azure_keyvault", "service-principal", lambda: {
        "operation": "Microsoft.KeyVault/vaults/secrets/read",
        "principal": {"type": "ServicePrincipal", "appId": "app-1", "createdTime": _now_ns() - 86_400_000_000_000},
        "resource": {"properties": {"enableSoftDelete": True, "enablePurgeProtection": True}},
    }, True, "first rule: valid operation, young service principal, protected vault"),
    ("azure_keyvault", "admin-user", lambda: {
        "operation": "Microsoft.KeyVault/vaults/keys/read",
        "principal": {"type": "User", "userPrincipalName": "security@company.com"},
        "context": {"conditionalAccess": {"compliant": True}},
    }, True, "second rule: vault admin with compliant access"),
    ("azure_nsg", "numeric-dangerous-port-external", lambda: {
        "operation": "Microsoft.Network/networkSecurityGroups/securityRules/write",
        "rule": {"direction": "Inbound", "access": "Allow", "destinationPortRange": 22,
                 "sourceAddressPrefix": "203.0.113.0/24", "priority": 1200},
    }, False, "port 22 as a number is dangerous and the source is not internal"),
    ("azure_nsg", "numeric-dangerous-port-internal", lambda: {
        "operation": "Microsoft.Network/networkSecurityGroups/securityRules/write",
        "rule": {"direction": "Inbound", "access": "Allow", "destinationPortRange": 3389,
                 "sourceAddressPrefix": "10.1.2.0/24", "priority": 1000},
    }, True, "second rule: dangerous port from 10/8 with priority >= 1000"),
    ("azure_storage", "compliant", lambda: {
        "operation": "Microsoft.Storage/storageAccounts/write",
        "resource": {"properties": {
            "supportsHttpsTrafficOnly": True, "minimumTlsVersion": "TLS1_2",
            "encryption": {"services": {"blob": {"enabled": True}}, "keySource": "Microsoft.Storage"},
            "allowBlobPublicAccess": False, "networkAcls": {"defaultAction": "Deny", "ipRules": [{"value": "1.2.3.4"}]},
        }},
    }, True, "every condition holds and ipRules is non-empty"),
    ("azure_vm", "compliant", lambda: {
        "operation": "Microsoft.Compute/virtualMachines/write",
        "resource": {"location": "eastus", "tags": {"environment": "prod"}, "properties": {
            "hardwareProfile": {"vmSize": "Standard_B2s"}, "osProfile": {"adminPassword": None}}},
    }, True, "allowed size and region, null password, prod tag"),
    ("data_processing", "cleared-reader", lambda: {
        "operation": "read", "data": {"name": "x", "ssn": "123"},
        "user": {"attributes": {"clearance": 3}},
    }, True, "sensitive data needs clearance 3, user has 3, read of 2 fields"),
    ("data_processing", "transformer", lambda: {
        "operation": "transform", "data": {"name": "x"}, "user": {"role": "data_processor", "attributes": {}},
    }, True, "second rule: data_processor transforming non-sensitive data"),
    ("data_sensitivity", "owner-writes", lambda: {
        "action": "write", "user": {"id": "u1", "roles": ["manager"]}, "resource": {"owner": "u1"},
    }, True, "manager may write, and owns the resource"),
    ("rbac", "admin", lambda: {
        "user": {"role": "admin", "permissions": ["p"]}, "action": "delete",
        "resource": {"classification": "internal"},
    }, True, "admin, allowed action and classification, non-empty permissions"),
    ("time_based", "emergency", lambda: {
        "user": {"emergency_access": True}, "action": "diagnose", "justification": "outage",
    }, True, "second rule: emergency access, allowed action, justification given"),
]


def _seed_policy(name: str) -> str:
    assert SEED is not None
    return (SEED / "policies" / f"{name}_policy.rego").read_text()


def _seed_input(name: str, n: int) -> Any:
    assert SEED is not None
    suffix = "" if n == 1 else str(n)
    return json.loads((SEED / "inputs" / f"{name}_input{suffix}.json").read_text())


def _pyrego_allow(policy: str, inp: Any) -> Any:
    engine = pyrego.Engine()
    engine.add_policy("policy.rego", policy)
    engine.set_input(inp)
    return engine.eval_rule("data.bench.allow")


def _opa_allow(policy: str, inp: Any) -> Any:
    try:
        oracle = get_oracle()
    except OracleUnavailable:
        return None
    res = oracle.evaluate({"policy.rego": policy}, "x := data.bench.allow", input=inp)
    assert not res.is_error, res.error_message
    return res.bindings[0]["x"] if res.bindings else pyrego.UNDEFINED


@pytest.fixture(autouse=True)
def _need_shared() -> None:
    if SHARED_DIR is None or not (SHARED_DIR / "bench").is_dir():
        pytest.skip(NO_SHARED)


@pytest.mark.parametrize("key", sorted(SEED_EXPECTED), ids=[f"{p}-input{n}" for p, n in sorted(SEED_EXPECTED)])
def test_seed(key: tuple[str, int]) -> None:
    name, n = key
    expected, why = SEED_EXPECTED[key]
    policy, inp = _seed_policy(name), _seed_input(name, n)
    opa = _opa_allow(policy, inp)
    if opa is not None:
        assert opa == expected, f"the table disagrees with OPA for {name} input {n}"
    got = _pyrego_allow(policy, inp)
    assert got is expected, f"{name} input {n}: expected {expected} ({why}), got {got!r}"


@pytest.mark.parametrize("entry", EXTRA_INPUTS, ids=[f"{e[0]}-{e[1]}" for e in EXTRA_INPUTS])
def test_seed_extra_inputs(entry: tuple[str, str, Any, bool, str]) -> None:
    name, _label, make_input, expected, why = entry
    policy, inp = _seed_policy(name), make_input()
    opa = _opa_allow(policy, inp)
    if opa is not None:
        assert opa == expected, f"the table disagrees with OPA for {name} {_label}"
    got = _pyrego_allow(policy, inp)
    assert got is expected, f"{name} {_label}: expected {expected} ({why}), got {got!r}"


def test_seed_engine_reuse() -> None:
    """One engine, inputs swapped with set_input: answers must not leak between inputs."""
    for name in POLICIES:
        engine = pyrego.Engine()
        engine.add_policy("policy.rego", _seed_policy(name))
        for _round in range(2):
            for n in (1, 2, 3):
                engine.set_input(_seed_input(name, n))
                assert engine.eval_rule("data.bench.allow") is SEED_EXPECTED[(name, n)][0], (name, n)


# ---------------------------------------------------------------- ACI


def _aci_cases() -> list[dict[str, Any]]:
    if ACI is None or not (ACI / "aci.yaml").is_file():
        return []
    doc = load_yaml((ACI / "aci.yaml").read_text())
    return list(doc.get("cases") or [])


ACI_CASES = _aci_cases()


def _aci_engine(case: dict[str, Any]) -> Any:
    assert ACI is not None
    engine = pyrego.Engine()
    engine.set_rego_v0(True)
    for i, module in enumerate(case["modules"]):
        path = ACI / module
        if module.endswith(".rego") and "\n" not in module and path.is_file():
            engine.add_policy(str(path), path.read_text())
        else:
            engine.add_policy(f"inline-{i}.rego", module)
    if case.get("data") is not None:
        engine.add_data(case["data"])
    if "input" in case:
        engine.set_input(case["input"])
    return engine


@pytest.mark.parametrize("case", ACI_CASES or [None], ids=[c["note"] for c in ACI_CASES] or ["aci-missing"])
def test_aci(case: dict[str, Any] | None) -> None:
    if case is None:
        pytest.skip(NO_SHARED)
    engine = _aci_engine(case)
    res = engine.eval_query(f"x = {case['query']}")
    got = [dict(r.get("bindings") or {}) for r in res.get("result") or []]
    want = case["want_result"]
    assert results_equal(want, got), f"{case['note']}: want {json.dumps(want)[:1500]}\ngot {json.dumps(got, default=str)[:1500]}"


def test_aci_case_count() -> None:
    assert len(ACI_CASES) == 9


def test_seed_files_present() -> None:
    assert SEED is not None
    assert sorted(p.name.removesuffix("_policy.rego") for p in (SEED / "policies").glob("*.rego")) == POLICIES
    assert Path(SEED / "inputs").is_dir()
