"""The seed policies written by hand in Python: the baseline of ``pyrego bench``'s ``python`` engine.

One plain function per seed policy (``/bench/seed/policies/<name>_policy.rego``),
taking the input document (parsed JSON: dicts, lists, strings, numbers,
booleans, None) and returning what ``data.bench.allow`` is for that input.
Every seed policy has ``default allow := false``, so ``allow`` is never
undefined and every function returns ``True`` or ``False``;
:data:`UNDEFINED` (``pyrego.UNDEFINED``) is what a function would return
for an undefined decision.

The functions are written as a developer would write the same decisions
without Rego: straight-line checks over the input dicts, returning early.
They are exact on any JSON input, not only on the shipped ones
(``tests/test_bench_handwritten.py`` compares them with pyrego on mutated
inputs), so where Rego's rules differ from Python's operators they say so:

- a path like ``input.a.b`` exists only if ``input.a`` is an object with key
  ``b`` (``null`` is a value, not a missing key);
- ``x == true`` holds only for the boolean (Python's ``1 == True`` does not
  count), and numbers never equal booleans;
- ``count`` takes strings, arrays and objects; anything else is an error, which
  (outside strict mode) makes the expression undefined, as does arithmetic on
  a non-number or ``startswith`` on a non-string;
- ``>=`` between values of different types follows Rego's order of types
  (null < booleans < numbers < strings < arrays < objects): a string
  clearance level is above every number.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from pyrego import UNDEFINED

Decision = Callable[[Any], Any]

_MISSING = object()
_NUMBER = (int, float)
_AFTER_NUMBERS = (str, list, dict)  # types Rego orders above every number


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER or (isinstance(value, _NUMBER) and not isinstance(value, bool))


def _count(value: Any) -> int | None:
    """Rego's ``count``: None where it is undefined (not a string, array or object)."""
    if isinstance(value, (str, list, dict)):
        return len(value)
    return None


def _at_least(value: Any, bound: int) -> bool:
    """``value >= bound`` in Rego's ordering, for a number ``bound``."""
    if _is_number(value):
        return bool(value >= bound)
    return isinstance(value, _AFTER_NUMBERS)


def _equal(a: Any, b: Any) -> bool:
    """Rego equality: numbers by value but never equal to booleans, recursively."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if _is_number(a):
        return _is_number(b) and a == b
    return type(a) is type(b) and a == b


def _obj(value: Any) -> Any:
    """``value`` if it is an object, else an empty one (so that its keys are missing)."""
    return value if isinstance(value, dict) else _EMPTY


_EMPTY: dict[str, Any] = {}


# ---------------------------------------------------------------- api_access

_API_PREFIXES = ("/api/v1/", "/api/v2/", "/api/v3/")
_DAY_NS = 86400000000000


def api_access(inp: Any) -> bool:
    inp = _obj(inp)
    request = _obj(inp.get("request"))
    if request.get("method") != "GET":
        return False
    path = request.get("path")
    if not isinstance(path, str) or not path.startswith(_API_PREFIXES):
        return False
    user = _obj(inp.get("user"))
    if user.get("authenticated") is not True:
        return False
    login_time = user.get("login_time")
    return _is_number(login_time) and time.time_ns() - login_time < _DAY_NS


# ---------------------------------------------------------------- azure_keyvault

_KV_OPERATIONS = (
    "Microsoft.KeyVault/vaults/keys/read",
    "Microsoft.KeyVault/vaults/secrets/read",
    "Microsoft.KeyVault/vaults/certificates/read",
)
_VAULT_ADMINS = ("admin@company.com", "security@company.com")
_YEAR_NS = 31536000000000000


def azure_keyvault(inp: Any) -> bool:
    inp = _obj(inp)
    if inp.get("operation") not in _KV_OPERATIONS:
        return False
    principal = _obj(inp.get("principal"))
    kind = principal.get("type")
    if kind == "ServicePrincipal":
        app_id = principal.get("appId", _MISSING)
        props = _obj(_obj(inp.get("resource")).get("properties"))
        created = principal.get("createdTime")
        if (
            app_id is not _MISSING
            and app_id != ""
            and props.get("enableSoftDelete") is True
            and props.get("enablePurgeProtection") is True
            and _is_number(created)
            and time.time_ns() - created < _YEAR_NS
        ):
            return True
    if kind == "User":
        context = _obj(_obj(inp.get("context")).get("conditionalAccess"))
        return principal.get("userPrincipalName") in _VAULT_ADMINS and context.get("compliant") is True
    return False


# ---------------------------------------------------------------- azure_nsg

_NSG_OPERATION = "Microsoft.Network/networkSecurityGroups/securityRules/write"
_DANGEROUS_PORTS = (22, 3389, 1433, 3306, 5432, 6379, 27017)
_INTERNAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


def _is_dangerous(port: Any) -> bool:
    return _is_number(port) and port in _DANGEROUS_PORTS


@lru_cache(maxsize=1024)
def _is_internal(prefix: str) -> bool:
    """``net.cidr_contains`` of one of the internal networks and ``prefix`` (an address or a CIDR)."""
    try:
        net = ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return False
    return any(net.version == n.version and net.subnet_of(n) for n in _INTERNAL_NETWORKS)  # type: ignore[arg-type]


def azure_nsg(inp: Any) -> bool:
    inp = _obj(inp)
    if inp.get("operation") != _NSG_OPERATION:
        return False
    rule = _obj(inp.get("rule"))
    if rule.get("direction") != "Inbound" or rule.get("access") != "Allow":
        return False
    port = rule.get("destinationPortRange", _MISSING)
    if port is _MISSING:
        return False
    source = rule.get("sourceAddressPrefix", _MISSING)
    if not _is_dangerous(port):
        return port != "*" and source is not _MISSING and source != "*" and source != "Internet"
    return isinstance(source, str) and _is_internal(source) and _at_least(rule.get("priority"), 1000)


# ---------------------------------------------------------------- azure_storage


def azure_storage(inp: Any) -> bool:
    inp = _obj(inp)
    if inp.get("operation") != "Microsoft.Storage/storageAccounts/write":
        return False
    props = _obj(_obj(inp.get("resource")).get("properties"))
    if props.get("supportsHttpsTrafficOnly") is not True or props.get("minimumTlsVersion") != "TLS1_2":
        return False
    encryption = _obj(props.get("encryption"))
    blob = _obj(_obj(encryption.get("services")).get("blob"))
    if blob.get("enabled") is not True or encryption.get("keySource") != "Microsoft.Storage":
        return False
    if props.get("allowBlobPublicAccess") is not False:
        return False
    acls = _obj(props.get("networkAcls"))
    if acls.get("defaultAction") != "Deny":
        return False
    n = _count(acls.get("ipRules"))
    return n is not None and n > 0


# ---------------------------------------------------------------- azure_vm

_VM_SIZES = ("Standard_B1s", "Standard_B2s", "Standard_B4ms", "Standard_D2s_v3", "Standard_D4s_v3", "Standard_F2s_v2")
_REGIONS = ("eastus", "westus2", "northeurope", "southeastasia")
_ENVIRONMENTS = ("dev", "test", "prod")


def azure_vm(inp: Any) -> bool:
    inp = _obj(inp)
    if inp.get("operation") != "Microsoft.Compute/virtualMachines/write":
        return False
    resource = _obj(inp.get("resource"))
    props = _obj(resource.get("properties"))
    if _obj(props.get("hardwareProfile")).get("vmSize") not in _VM_SIZES:
        return False
    if resource.get("location") not in _REGIONS:
        return False
    if _obj(props.get("osProfile")).get("adminPassword", _MISSING) is not None:
        return False
    tags = resource.get("tags")
    n = _count(tags)
    return n is not None and n > 0 and _obj(tags).get("environment") in _ENVIRONMENTS


# ---------------------------------------------------------------- data_processing

_SENSITIVE_FIELDS = ("ssn", "credit_card", "password")


def _contains_sensitive(data: Any) -> bool:
    return isinstance(data, dict) and any(data.get(f) is not None for f in _SENSITIVE_FIELDS)


def data_processing(inp: Any) -> bool:
    inp = _obj(inp)
    user = _obj(inp.get("user"))
    operation = inp.get("operation")
    data = inp.get("data", _MISSING)
    attributes = user.get("attributes")
    if operation in ("read", "export") and isinstance(attributes, dict):
        n = _count(data)
        if n is not None and 0 < n <= 1000:
            required = 3 if _contains_sensitive(data) else 1
            if _at_least(attributes.get("clearance", 0), required):
                return True
    return user.get("role") == "data_processor" and operation == "transform" and not _contains_sensitive(data)


# ---------------------------------------------------------------- data_sensitivity

_ROLE_PERMISSIONS = {
    "admin": ("read", "write", "delete", "admin"),
    "manager": ("read", "write"),
    "user": ("read",),
}


def data_sensitivity(inp: Any) -> bool:
    inp = _obj(inp)
    action = inp.get("action")
    if not isinstance(action, str):
        return False
    user = _obj(inp.get("user"))
    roles = user.get("roles")
    if isinstance(roles, dict):
        roles = roles.values()
    elif not isinstance(roles, list):
        return False
    if not any(isinstance(r, str) and action in _ROLE_PERMISSIONS.get(r, ()) for r in roles):
        return False
    resource = _obj(inp.get("resource"))
    owner = resource.get("owner", _MISSING)
    user_id = user.get("id", _MISSING)
    if owner is not _MISSING and user_id is not _MISSING and _equal(owner, user_id):
        return True
    return resource.get("public") is True and action == "read"


# ---------------------------------------------------------------- rbac

_RBAC_ACTIONS = ("read", "write", "delete")
_CLASSIFICATIONS = ("public", "internal")


def rbac(inp: Any) -> bool:
    inp = _obj(inp)
    user = _obj(inp.get("user"))
    if user.get("role") != "admin" or inp.get("action") not in _RBAC_ACTIONS:
        return False
    if _obj(inp.get("resource")).get("classification") not in _CLASSIFICATIONS:
        return False
    n = _count(user.get("permissions"))
    return n is not None and n > 0


# ---------------------------------------------------------------- time_based

_NEW_YORK = ZoneInfo("America/New_York")


def _business_hours() -> bool:
    return 9 <= datetime.now(_NEW_YORK).hour < 17


def time_based(inp: Any) -> bool:
    inp = _obj(inp)
    user = _obj(inp.get("user"))
    action = inp.get("action")
    if user.get("department") in ("engineering", "product") and action == "deploy" and _business_hours():
        approvals = inp.get("approvals")
        items = approvals.values() if isinstance(approvals, dict) else approvals if isinstance(approvals, list) else ()
        if sum(1 for a in items if isinstance(a, dict) and a.get("status") == "approved") >= 2:
            return True
    if user.get("emergency_access") is not True or action not in ("read", "diagnose"):
        return False
    justification = inp.get("justification", _MISSING)
    return justification is not _MISSING and justification != ""


#: The hand-written decision of each seed policy, by policy name.
HANDWRITTEN: dict[str, Decision] = {
    "api_access": api_access,
    "azure_keyvault": azure_keyvault,
    "azure_nsg": azure_nsg,
    "azure_storage": azure_storage,
    "azure_vm": azure_vm,
    "data_processing": data_processing,
    "data_sensitivity": data_sensitivity,
    "rbac": rbac,
    "time_based": time_based,
}

__all__ = ["HANDWRITTEN", "UNDEFINED", "Decision", *HANDWRITTEN]
