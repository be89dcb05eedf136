# Helpers for admission reviews as the admission controller passes them to a
# constraint template:
#
#   input.review.object      the object being admitted (`resource`)
#   input.review.kind        {"group", "version", "kind"}
#   input.parameters         the constraint's parameters
#
# Namespaces and images listed in data.exemptions (exemptions/data.json) are
# never checked.
package lib.k8s

import rego.v1

resource := input.review.object

kind := input.review.kind.kind

name := resource.metadata.name

default namespace := ""

namespace := resource.metadata.namespace

default parameters := {}

parameters := input.parameters

# Kinds whose pods are described by a template at spec.template.
workload_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}

# The pod spec of a Pod, a workload or a CronJob.
pod_spec(obj) := obj.spec if {
	obj.kind == "Pod"
} else := obj.spec.jobTemplate.spec.template.spec if {
	obj.kind == "CronJob"
} else := obj.spec.template.spec if {
	obj.kind in workload_kinds
}

labels(obj) := object.get(obj, ["metadata", "labels"], {})

annotations(obj) := object.get(obj, ["metadata", "annotations"], {})

has_label(obj, key) if key in object.keys(labels(obj))

exempt_namespace(ns) if ns in data.exemptions.namespaces

exempt_namespace(ns) if {
	some prefix in data.exemptions.namespace_prefixes
	startswith(ns, prefix)
}

# The object under review lives in an exempt namespace.
exempt if exempt_namespace(namespace)

# "Deployment shop/web" for messages.
describe(obj) := sprintf("%s %s/%s", [obj.kind, object.get(obj, ["metadata", "namespace"], "default"), obj.metadata.name])

# Boolean parameter with a default.
flag(key, fallback) := object.get(parameters, key, fallback)
