# No privileged containers, and (when checkEscalation is set) no container
# that may gain more privileges than its parent process.
#
# parameters:
#   exemptImages:     ["registry.example.com/node-agent:*"]
#   checkEscalation:  true
package k8spspprivileged

import data.lib.containers
import data.lib.k8s
import rego.v1

violation contains {"msg": msg, "details": {}} if {
	not k8s.exempt
	some c in containers.reviewed
	not containers.exempt(c)
	containers.security_context(c).privileged == true
	msg := sprintf("Privileged container is not allowed: %v, securityContext: %v", [c.name, c.securityContext])
}

violation contains {"msg": msg, "details": {"container": c.name}} if {
	not k8s.exempt
	k8s.flag("checkEscalation", false)
	some c in containers.reviewed
	not containers.exempt(c)
	not containers.security_context(c).allowPrivilegeEscalation == false
	msg := sprintf("Privilege escalation container is not allowed: %v", [c.name])
}
