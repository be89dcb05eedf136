# Shared helpers: what kind of resource a document is, its containers.
package inventory.lib

import rego.v1

workload_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

is_workload if input.kind in workload_kinds

is_pod if input.kind == "Pod"

is_kubernetes if is_workload

is_kubernetes if is_pod

pod_spec := input.spec.template.spec if is_workload

pod_spec := input.spec if is_pod

containers contains c if some c in pod_spec.containers

containers contains c if some c in pod_spec.initContainers

name := input.metadata.name if is_kubernetes

name := input.name if not is_kubernetes

resource_id := sprintf("%s/%s/%s", [input.kind, object.get(input.metadata, "namespace", "default"), input.metadata.name]) if is_kubernetes

resource_id := sprintf("%s/%s", [input.type, input.name]) if not is_kubernetes
