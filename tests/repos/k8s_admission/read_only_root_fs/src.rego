# Containers must run with a read-only root filesystem.
#
# parameters:
#   exemptImages: images that may write to their root filesystem
package k8spspreadonlyrootfilesystem

import data.lib.containers as ctr
import data.lib.k8s
import rego.v1

writable(c) if not ctr.security_context(c).readOnlyRootFilesystem == true

violation contains {"msg": msg, "details": {"container": c.name, "kind": ctr.kind_of(c)}} if {
	not k8s.exempt
	some c in ctr.reviewed
	c._field != "ephemeralContainers"
	not ctr.exempt(c)
	writable(c)
	msg := sprintf("only read-only root filesystem container is allowed: %v", [c.name])
}
