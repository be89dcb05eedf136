# Replica counts of workloads and autoscalers must fall in an allowed range.
#
# parameters:
#   ranges: [{"min_replicas": 2, "max_replicas": 10}]
package k8sreplicalimits

import data.lib.k8s
import rego.v1

scaled_kinds := {"Deployment", "StatefulSet", "ReplicaSet"}

within_any(n) if {
	some range in k8s.parameters.ranges
	n >= range.min_replicas
	n <= range.max_replicas
}

ranges_text := concat(", ", [sprintf("{min: %v, max: %v}", [r.min_replicas, r.max_replicas]) | some r in k8s.parameters.ranges])

violation contains {"msg": msg} if {
	k8s.kind in scaled_kinds
	replicas := object.get(k8s.resource.spec, "replicas", 1)
	not within_any(replicas)
	msg := sprintf("The provided number of replicas is not allowed for %v: %v. Allowed ranges: %v", [k8s.name, replicas, ranges_text])
}

# Both bounds of an autoscaler must be allowed replica counts.
autoscaler_ok(spec) if {
	every n in [object.get(spec, "minReplicas", 1), spec.maxReplicas] {
		within_any(n)
	}
}

violation contains {"msg": msg} if {
	k8s.kind == "HorizontalPodAutoscaler"
	not autoscaler_ok(k8s.resource.spec)
	msg := sprintf("HorizontalPodAutoscaler %v scales outside the allowed ranges: %v", [k8s.name, ranges_text])
}
