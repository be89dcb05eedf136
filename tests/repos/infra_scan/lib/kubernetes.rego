# Helpers for Kubernetes workload manifests.
package lib.kubernetes

workload_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec := input.spec if input.kind == "Pod"

pod_spec := input.spec.template.spec if input.kind in workload_kinds

pod_spec := input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

# Every container of the pod, init containers included.
containers contains c if some c in pod_spec.containers

containers contains c if some c in pod_spec.initContainers

# "Deployment/web" or "Deployment/payments/web" when a namespace is set.
name := sprintf("%s/%s/%s", [input.kind, input.metadata.namespace, input.metadata.name]) if {
	input.metadata.namespace
} else := sprintf("%s/%s", [input.kind, input.metadata.name])

container_name(c) := sprintf("%s[%s]", [name, c.name])

# securityContext settings: the container's own, else the pod's.
security_setting(c, key) := value if {
	value := c.securityContext[key]
} else := pod_spec.securityContext[key]
