# Shared helpers for the admission constraints.
#
# The constraints run both under the admission controller, where the object
# arrives as input.review.object and the parameters as input.parameters, and
# under a plain policy runner that passes the manifest itself as input.
package lib.kubernetes

import future.keywords.in

default is_review = false

is_review {
	has_field(input, "review")
	has_field(input.review, "object")
}

has_field(obj, field) {
	_ = obj[field]
}

resource = input.review.object {
	is_review
}

resource = input {
	not is_review
}

default parameters = {}

parameters = input.parameters {
	is_review
}

kind = resource.kind

name = resource.metadata.name

default namespace = "default"

namespace = resource.metadata.namespace

workload_kinds = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec(obj) = spec {
	obj.kind == "Pod"
	spec := obj.spec
} else = spec {
	workload_kinds[obj.kind]
	spec := obj.spec.template.spec
} else = spec {
	obj.kind == "CronJob"
	spec := obj.spec.jobTemplate.spec.template.spec
}

# The app containers of the object under review (no init containers).
containers[c] {
	some c in pod_spec(resource).containers
}

# Init containers run to completion before the app containers start.
init_containers[c] {
	c := pod_spec(resource).initContainers[_]
}

all_containers := containers | init_containers

label(obj, key) = value {
	value := obj.metadata.labels[key]
}

annotation(obj, key) = value {
	value := obj.metadata.annotations[key]
}

# "Deployment web/api"
description := sprintf("%s %s/%s", [kind, namespace, name])

# Parameter lookup with a default.
param(key, fallback) = value {
	value := object.get(parameters, key, fallback)
}
