# Container images must come from one of the allowed repositories.
#
# parameters:
#   repos: ["registry.example.com/", "ghcr.io/example/"]
package k8sallowedrepos

import data.lib.containers as ctr
import data.lib.k8s
import rego.v1

allowed(image) if {
	some repo in k8s.parameters.repos
	startswith(image, repo)
}

violation contains {"msg": msg, "details": {"container": c.name, "image": c.image}} if {
	not k8s.exempt
	some c in ctr.reviewed
	not ctr.exempt(c)
	not allowed(c.image)
	msg := sprintf("%v <%v> has an invalid image repo <%v>, allowed repos are %v", [ctr.kind_of(c), c.name, c.image, k8s.parameters.repos])
}
