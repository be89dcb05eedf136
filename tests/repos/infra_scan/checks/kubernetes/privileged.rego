# METADATA
# title: Privileged container
# description: Privileged containers have full access to the host.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/security/pod-security-standards/
# custom:
#   id: K8S-001
#   severity: CRITICAL
package checks.kubernetes.privileged

import data.lib.kubernetes as k8s
import data.lib.result

deny contains res if {
	some c in k8s.containers
	c.securityContext.privileged == true
	res := result.new(sprintf("%s is privileged", [k8s.container_name(c)]), k8s.name, rego.metadata.chain())
}

deny contains res if {
	some c in k8s.containers
	some cap in c.securityContext.capabilities.add
	upper(cap) in {"SYS_ADMIN", "NET_ADMIN", "ALL"}
	res := result.new(sprintf("%s adds capability %s", [k8s.container_name(c), cap]), k8s.name, rego.metadata.chain())
}
