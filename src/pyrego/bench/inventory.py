"""A realistic inventory to check: Kubernetes workloads and Azure resources, as JSON Lines.

>>> from pyrego.bench.inventory import documents
>>> docs = list(documents(1000, seed=7))        # the same 1000 documents for seed 7, every time

Each document is one resource as a scanner exports it:

- Kubernetes ``Deployment``, ``StatefulSet``, ``DaemonSet`` and ``Pod``
  manifests (``apps/v1``, ``v1``): labels, replicas, a pod template with
  init and main containers, images from several registries (tags, ``latest``,
  digests), ports, ``resources``, container and pod ``securityContext``,
  host namespaces, volumes;
- Azure storage accounts, virtual machines and network security groups
  shaped as ARM exports (``type``, ``name``, ``location``, ``tags``,
  ``properties``), as the seed ``azure_*`` inputs have them.

Most documents are compliant or nearly; some break one or several rules
(privileged containers, no limits, public blobs, SSH open to the world...), a
few are inconsistent in a way that makes a policy fail (an owner given two
different ways: ``eval_conflict_error`` in the policies of
``benchmarks/inventory/``). Generation is deterministic for a seed and
streams: ``python -m pyrego.bench.inventory --docs 1000000 > inventory.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from typing import Any

REGISTRIES = [
    "registry.example.com",
    "registry.example.com/platform",
    "docker.io/library",
    "ghcr.io/acme",
    "quay.io/prometheus",
]
IMAGES = [
    "nginx",
    "redis",
    "postgres",
    "api-gateway",
    "billing",
    "payments",
    "node-exporter",
    "fluent-bit",
    "busybox",
    "envoy",
]
TEAMS = ["payments", "identity", "search", "platform", "data", "web"]
NAMESPACES = ["default", "kube-system", "payments", "identity", "search", "monitoring", "web", "batch"]
ENVIRONMENTS = ["production", "staging", "development"]
REGIONS = ["eastus", "westus2", "northeurope", "southeastasia", "westeurope", "brazilsouth"]
VM_SIZES = ["Standard_D2s_v3", "Standard_D4s_v3", "Standard_B2s", "Standard_E8s_v4", "Standard_M128s", "Standard_NC6"]
PORTS = [22, 80, 443, 1433, 3306, 3389, 5432, 6379, 8080, 8443, 9090, 27017]
CAPABILITIES = ["NET_ADMIN", "SYS_ADMIN", "NET_BIND_SERVICE", "SYS_TIME", "CHOWN"]
PREFIXES = [
    "*",
    "Internet",
    "0.0.0.0/0",
    "10.0.0.0/8",
    "10.12.0.0/16",
    "172.16.4.0/24",
    "192.168.1.0/24",
    "VirtualNetwork",
]


class _Gen:
    """One generator's random source and its little helpers."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, xs: list[Any]) -> Any:
        return xs[int(self.r.random() * len(xs))]

    def name(self, stem: str, n: int) -> str:
        return f"{stem}-{n:07d}"

    # -- Kubernetes ---------------------------------------------------------

    def image(self) -> str:
        r = self.r.random()
        registry = self.pick(REGISTRIES[:2]) if self.chance(0.85) else self.pick(REGISTRIES)
        base = f"{registry}/{self.pick(IMAGES)}"
        if r < 0.05:
            return base + ":latest"
        if r < 0.08:
            return base
        if r < 0.35:
            return base + "@sha256:" + f"{self.r.getrandbits(256):064x}"
        return f"{base}:{self.r.randint(1, 9)}.{self.r.randint(0, 30)}.{self.r.randint(0, 9)}"

    def resources(self) -> dict[str, Any]:
        if self.chance(0.03):
            return {}
        cpu = self.pick(["100m", "250m", "500m", "1", "2", "4"])
        mem = self.pick(["64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "4Gi", "16Gi"])
        out: dict[str, Any] = {"requests": {"cpu": cpu, "memory": mem}}
        if not self.chance(0.04):
            out["limits"] = {"cpu": cpu, "memory": mem} if self.chance(0.9) else {"memory": mem}
        return out

    def security_context(self) -> dict[str, Any] | None:
        if self.chance(0.04):
            return None
        sc: dict[str, Any] = {
            "runAsNonRoot": not self.chance(0.1),
            "readOnlyRootFilesystem": not self.chance(0.25),
            "allowPrivilegeEscalation": self.chance(0.04),
        }
        if self.chance(0.03):
            sc["privileged"] = True
        if self.chance(0.3):
            sc["runAsUser"] = self.pick([0, 1000, 10001, 65534, 1000, 10001])
        if self.chance(0.06):
            sc["capabilities"] = {"add": [self.pick(CAPABILITIES)], "drop": ["ALL"]}
        elif self.chance(0.5):
            sc["capabilities"] = {"drop": ["ALL"]}
        return sc

    def container(self, name: str) -> dict[str, Any]:
        c: dict[str, Any] = {
            "name": name,
            "image": self.image(),
            "imagePullPolicy": self.pick(["IfNotPresent", "Always"]),
        }
        if self.chance(0.7):
            c["ports"] = [{"containerPort": self.pick(PORTS), "protocol": "TCP"} for _ in range(self.r.randint(1, 2))]
        c["resources"] = self.resources()
        sc = self.security_context()
        if sc is not None:
            c["securityContext"] = sc
        if self.chance(0.6):
            c["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}
        if self.chance(0.4):
            c["env"] = [{"name": "LOG_LEVEL", "value": self.pick(["info", "debug"])}]
        return c

    def pod_spec(self, app: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "containers": [self.container(app if i == 0 else f"{app}-sidecar{i}") for i in range(self.r.randint(1, 3))]
        }
        if self.chance(0.2):
            spec["initContainers"] = [self.container("init")]
        if self.chance(0.04):
            spec["hostNetwork"] = True
        if self.chance(0.02):
            spec["hostPID"] = True
        if self.chance(0.5):
            spec["securityContext"] = {"runAsNonRoot": True, "fsGroup": 2000}
        spec["serviceAccountName"] = self.pick(["default", app])
        if self.chance(0.3):
            spec["volumes"] = (
                [{"name": "data", "emptyDir": {}}]
                if self.chance(0.9)
                else [{"name": "host", "hostPath": {"path": "/var/run"}}]
            )
        return spec

    def labels(self, app: str, team: str) -> dict[str, str]:
        labels = {"app": app}
        if not self.chance(0.05):
            labels["team"] = team
        if not self.chance(0.06):
            labels["environment"] = self.pick(ENVIRONMENTS)
        if self.chance(0.5):
            labels["cost-center"] = f"cc-{self.r.randint(100, 999)}"
        return labels

    def workload(self, n: int) -> dict[str, Any]:
        kind = self.pick(["Deployment", "Deployment", "Deployment", "StatefulSet", "DaemonSet", "Pod", "Pod"])
        team = self.pick(TEAMS)
        app = self.name(self.pick(IMAGES), n)
        meta: dict[str, Any] = {"name": app, "namespace": self.pick(NAMESPACES), "labels": self.labels(app, team)}
        annotations: dict[str, str] = {"owner": f"{team}@example.com"}
        if self.chance(0.004):
            annotations["owner"] = "someone-else@example.com"
            meta["labels"]["owner"] = f"{team}@example.com"
        elif self.chance(0.3):
            meta["labels"]["owner"] = annotations["owner"]
        meta["annotations"] = annotations
        if kind == "Pod":
            return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": self.pod_spec(app)}
        spec: dict[str, Any] = {
            "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": dict(meta["labels"])}, "spec": self.pod_spec(app)},
        }
        if kind != "DaemonSet":
            spec["replicas"] = self.pick([1, 2, 3, 3, 5, 10, 50])
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}

    # -- Azure --------------------------------------------------------------

    def tags(self) -> dict[str, str]:
        tags = {}
        if not self.chance(0.1):
            tags["environment"] = self.pick(ENVIRONMENTS)
        if not self.chance(0.12):
            tags["owner"] = f"{self.pick(TEAMS)}@example.com"
        if self.chance(0.6):
            tags["costCenter"] = f"cc-{self.r.randint(100, 999)}"
        return tags

    def storage(self, n: int) -> dict[str, Any]:
        props = {
            "supportsHttpsTrafficOnly": not self.chance(0.05),
            "minimumTlsVersion": self.pick(["TLS1_2", "TLS1_2", "TLS1_2", "TLS1_1", "TLS1_0"]),
            "allowBlobPublicAccess": self.chance(0.08),
            "encryption": {
                "keySource": self.pick(["Microsoft.Storage", "Microsoft.Storage", "Microsoft.Keyvault"]),
                "services": {"blob": {"enabled": not self.chance(0.03)}, "file": {"enabled": True}},
            },
            "networkAcls": {
                "defaultAction": self.pick(["Deny", "Deny", "Allow"]),
                "ipRules": [
                    {"value": f"203.0.113.{self.r.randint(1, 254)}", "action": "Allow"}
                    for _ in range(self.r.randint(0, 3))
                ],
            },
        }
        return {
            "type": "Microsoft.Storage/storageAccounts",
            "name": f"st{n:09d}",
            "location": self.pick(REGIONS),
            "tags": self.tags(),
            "properties": props,
        }

    def vm(self, n: int) -> dict[str, Any]:
        linux = not self.chance(0.3)
        os_profile: dict[str, Any] = {
            "computerName": f"vm{n}",
            "adminUsername": self.pick(["azureuser", "admin", "root"]),
        }
        if linux:
            os_profile["linuxConfiguration"] = {"disablePasswordAuthentication": not self.chance(0.15)}
        else:
            os_profile["windowsConfiguration"] = {"enableAutomaticUpdates": not self.chance(0.2)}
        props = {
            "hardwareProfile": {"vmSize": self.pick(VM_SIZES)},
            "storageProfile": {
                "osDisk": {
                    "osType": "Linux" if linux else "Windows",
                    "managedDisk": {"storageAccountType": "Premium_LRS"},
                    "encryptionSettings": {"enabled": not self.chance(0.1)},
                },
                "dataDisks": [
                    {"lun": i, "diskSizeGB": self.pick([128, 256, 1024])} for i in range(self.r.randint(0, 2))
                ],
            },
            "osProfile": os_profile,
            "networkProfile": {
                "networkInterfaces": [{"id": f"/subscriptions/s/nic-{n}", "publicIp": self.chance(0.2)}]
            },
        }
        return {
            "type": "Microsoft.Compute/virtualMachines",
            "name": f"vm-{n:07d}",
            "location": self.pick(REGIONS),
            "tags": self.tags(),
            "properties": props,
        }

    def nsg(self, n: int) -> dict[str, Any]:
        rules = []
        for i in range(self.r.randint(1, 5)):
            port = self.pick(PORTS)
            rules.append(
                {
                    "name": f"rule-{i}",
                    "properties": {
                        "direction": self.pick(["Inbound", "Inbound", "Outbound"]),
                        "access": self.pick(["Allow", "Allow", "Deny"]),
                        "protocol": self.pick(["Tcp", "Udp", "*"]),
                        "sourceAddressPrefix": self.pick(PREFIXES),
                        "destinationPortRange": str(port) if self.chance(0.9) else f"{port}-{port + 10}",
                        "priority": 100 + 10 * i,
                    },
                }
            )
        return {
            "type": "Microsoft.Network/networkSecurityGroups",
            "name": f"nsg-{n:07d}",
            "location": self.pick(REGIONS),
            "tags": self.tags(),
            "properties": {"securityRules": rules},
        }

    def document(self, n: int) -> dict[str, Any]:
        r = self.r.random()
        if r < 0.55:
            return self.workload(n)
        if r < 0.7:
            return self.storage(n)
        if r < 0.85:
            return self.vm(n)
        return self.nsg(n)


def documents(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """``count`` inventory documents, the same ones for the same ``seed``, generated as they are read."""
    gen = _Gen(seed)
    for n in range(count):
        yield gen.document(n)


def json_lines(count: int, seed: int = 0) -> Iterator[str]:
    """:func:`documents` as JSON Lines (one compact document per line, with its newline)."""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for doc in documents(count, seed):
        yield dumps(doc) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m pyrego.bench.inventory --docs N [--seed S]``: JSON Lines on standard output."""
    parser = argparse.ArgumentParser(description="Write a generated inventory as JSON Lines.")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = sys.stdout
    for line in json_lines(args.docs, args.seed):
        out.write(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
