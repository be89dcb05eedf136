# Kubernetes workloads: the usual admission checks, as a scan reports them.
package inventory.k8s

import data.inventory.lib
import rego.v1

trusted_registries := ["registry.example.com/", "ghcr.io/acme/"]

required_labels := {"app", "team", "environment"}

system_namespaces := {"kube-system"}

deny contains msg if {
	some c in lib.containers
	c.securityContext.privileged == true
	msg := sprintf("%s: container %q is privileged", [lib.resource_id, c.name])
}

deny contains msg if {
	some c in lib.containers
	not c.securityContext.allowPrivilegeEscalation == false
	not input.metadata.namespace in system_namespaces
	msg := sprintf("%s: container %q may escalate privileges", [lib.resource_id, c.name])
}

deny contains msg if {
	some c in lib.containers
	not startswith_any(c.image, trusted_registries)
	msg := sprintf("%s: container %q uses image %q from an untrusted registry", [lib.resource_id, c.name, c.image])
}

deny contains msg if {
	some c in lib.containers
	not contains(c.image, "@sha256:")
	tag := image_tag(c.image)
	tag in {"", "latest"}
	msg := sprintf("%s: container %q has no pinned image tag", [lib.resource_id, c.name])
}

deny contains msg if {
	some c in lib.pod_spec.containers
	some resource in ["cpu", "memory"]
	not c.resources.limits[resource]
	msg := sprintf("%s: container %q has no %s limit", [lib.resource_id, c.name, resource])
}

deny contains msg if {
	some c in lib.containers
	some cap in c.securityContext.capabilities.add
	cap in {"SYS_ADMIN", "NET_ADMIN", "SYS_TIME"}
	msg := sprintf("%s: container %q adds capability %s", [lib.resource_id, c.name, cap])
}

deny contains msg if {
	some c in lib.containers
	c.securityContext.runAsUser == 0
	msg := sprintf("%s: container %q runs as root", [lib.resource_id, c.name])
}

deny contains msg if {
	some field in ["hostNetwork", "hostPID", "hostIPC"]
	lib.pod_spec[field] == true
	not input.metadata.namespace in system_namespaces
	msg := sprintf("%s: shares the host's namespace (%s)", [lib.resource_id, field])
}

deny contains msg if {
	some v in lib.pod_spec.volumes
	v.hostPath
	msg := sprintf("%s: mounts host path %s", [lib.resource_id, v.hostPath.path])
}

deny contains msg if {
	lib.is_kubernetes
	missing := required_labels - {k | some k, _ in input.metadata.labels}
	count(missing) > 0
	msg := sprintf("%s: missing labels %v", [lib.resource_id, sort(missing)])
}

deny contains msg if {
	lib.is_workload
	input.metadata.labels.environment == "production"
	input.spec.replicas < 2
	msg := sprintf("%s: production workloads need at least 2 replicas, has %d", [lib.resource_id, input.spec.replicas])
}

deny contains msg if {
	input.spec.replicas > 20
	msg := sprintf("%s: %d replicas is over the limit of 20", [lib.resource_id, input.spec.replicas])
}

warn contains msg if {
	some c in lib.pod_spec.containers
	not c.livenessProbe
	msg := sprintf("%s: container %q has no liveness probe", [lib.resource_id, c.name])
}

startswith_any(s, prefixes) if {
	some p in prefixes
	startswith(s, p)
}

image_tag(image) := tag if {
	parts := split(image, "/")
	last := parts[count(parts) - 1]
	contains(last, ":")
	tag := split(last, ":")[1]
} else := ""

# The workload's owner: its annotation, or its label (both given must agree).
owner := input.metadata.annotations.owner

owner := input.metadata.labels.owner
