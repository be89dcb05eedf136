# PersistentVolumeClaims must use an allowed storage class and stay under
# the maximum size.
#
# parameters:
#   maxSize: "50Gi"
#   storageClasses: ["standard", "ssd"]
package k8sstoragelimits

import data.lib.kubernetes
import future.keywords.in

is_claim {
	kubernetes.kind == "PersistentVolumeClaim"
}

requested := kubernetes.resource.spec.resources.requests.storage

violation[{"msg": msg, "details": {"requested": requested, "max": max}}] {
	is_claim
	max := kubernetes.parameters.maxSize
	units.parse_bytes(requested) > units.parse_bytes(max)
	msg := sprintf("%v requests %v of storage, more than the maximum of %v", [kubernetes.description, requested, max])
}

violation[{"msg": msg}] {
	is_claim
	allowed := {c | c := kubernetes.parameters.storageClasses[_]}
	class := object.get(kubernetes.resource.spec, "storageClassName", "")
	not class in allowed
	msg := sprintf("%v uses storage class %q; allowed classes: %v", [kubernetes.description, class, concat(", ", sort(allowed))])
}

# Claims must not ask for ReadWriteMany: the cluster's volumes do not support it.
violation[{"msg": msg}] {
	is_claim
	some i
	kubernetes.resource.spec.accessModes[i] == "ReadWriteMany"
	msg := sprintf("%v: access mode ReadWriteMany (position %d) is not supported", [kubernetes.description, i])
}
