# Containers must run as a non-root user, within the allowed UID ranges.
#
# parameters:
#   runAsUser:
#     rule: MustRunAsNonRoot | MustRunAs | RunAsAny
#     ranges: [{"min": 1000, "max": 65535}]
package k8spspallowedusers

import data.lib.kubernetes

rule = kubernetes.parameters.runAsUser.rule

# A container's setting wins over the pod's.
run_as_user(container) = uid {
	uid := container.securityContext.runAsUser
} else = uid {
	uid := kubernetes.pod_spec(kubernetes.resource).securityContext.runAsUser
}

run_as_non_root(container) = value {
	value := container.securityContext.runAsNonRoot
} else = value {
	value := kubernetes.pod_spec(kubernetes.resource).securityContext.runAsNonRoot
}

non_root_requested(container) {
	run_as_non_root(container) == true
}

in_ranges(uid) {
	range := kubernetes.parameters.runAsUser.ranges[_]
	uid >= range.min
	uid <= range.max
}

violation[{"msg": msg}] {
	rule == "MustRunAsNonRoot"
	container := kubernetes.all_containers[_]
	not non_root_requested(container)
	not run_as_user(container)
	msg := sprintf("Container %v must set runAsNonRoot or a non-zero runAsUser", [container.name])
}

violation[{"msg": msg}] {
	rule == "MustRunAsNonRoot"
	container := kubernetes.all_containers[_]
	run_as_user(container) == 0
	msg := sprintf("Container %v is attempting to run as root", [container.name])
}

violation[{"msg": msg}] {
	rule == "MustRunAs"
	container := kubernetes.all_containers[_]
	not run_as_user(container)
	msg := sprintf("Container %v must set runAsUser", [container.name])
}

violation[{"msg": msg}] {
	rule == "MustRunAs"
	container := kubernetes.all_containers[_]
	uid := run_as_user(container)
	not in_ranges(uid)
	ranges := [sprintf("%d-%d", [r.min, r.max]) | r := kubernetes.parameters.runAsUser.ranges[_]]
	msg := sprintf("Container %v is attempting to run as disallowed user %v. Allowed runAsUser: %v", [container.name, uid, concat(", ", ranges)])
}
