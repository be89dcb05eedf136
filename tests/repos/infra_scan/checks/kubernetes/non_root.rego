# METADATA
# title: Container may run as root
# description: runAsNonRoot must be set on the container or the pod.
# custom:
#   id: K8S-004
#   severity: MEDIUM
package checks.kubernetes.non_root

import data.lib.kubernetes as k8s
import data.lib.result

deny contains res if {
	some c in k8s.containers
	not explicitly_non_root(c)
	not runs_as_nonzero_uid(c)
	res := result.new(sprintf("%s does not set runAsNonRoot", [k8s.container_name(c)]), k8s.name, rego.metadata.chain())
}

# A helper rather than `not k8s.security_setting(c, "runAsNonRoot") == true`:
# OPA evaluates a function call nested in a negated expression before the
# negation, so that form is undefined (not true) when the setting is missing.
explicitly_non_root(c) if k8s.security_setting(c, "runAsNonRoot") == true

runs_as_nonzero_uid(c) if k8s.security_setting(c, "runAsUser") > 0
