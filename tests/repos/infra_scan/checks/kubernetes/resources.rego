# METADATA
# title: Container without resource limits
# description: Containers without CPU and memory limits can starve their neighbours.
# custom:
#   id: K8S-003
#   severity: MEDIUM
package checks.kubernetes.resources

import data.lib.kubernetes as k8s
import data.lib.result

deny contains res if {
	some c in k8s.containers
	missing := [r | some r in ["cpu", "memory"]; not c.resources.limits[r]]
	count(missing) > 0
	msg := sprintf("%s has no %s limit", [k8s.container_name(c), concat(" or ", missing)])
	res := result.new(msg, k8s.name, rego.metadata.chain())
}
