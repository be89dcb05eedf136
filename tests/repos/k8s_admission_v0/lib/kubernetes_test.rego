package lib.kubernetes_test

import data.lib.fixtures
import data.lib.kubernetes
import future.keywords.in
import future.keywords.every

test_review_input_is_detected {
	kubernetes.is_review with input as fixtures.review(fixtures.pod([]), {})
	not kubernetes.is_review with input as fixtures.pod([])
}

test_resource_from_review_or_plain_input {
	pod := fixtures.pod([])
	kubernetes.resource == pod with input as fixtures.review(pod, {})
	kubernetes.resource == pod with input as pod
}

test_parameters_only_in_reviews {
	kubernetes.parameters == {"a": 1} with input as fixtures.review(fixtures.pod([]), {"a": 1})
	kubernetes.parameters == {} with input as fixtures.pod([])
}

test_pod_spec_of_workloads {
	c := [fixtures.container("api", "api:1")]
	kubernetes.pod_spec(fixtures.pod(c)).containers == c
	kubernetes.pod_spec(fixtures.deployment(c)).containers == c
	not kubernetes.pod_spec(fixtures.service("ClusterIP", []))
}

test_all_containers_includes_init_containers {
	pod := json.patch(fixtures.pod([fixtures.container("api", "api:1")]), [{"op": "add", "path": "/spec/initContainers", "value": [fixtures.container("migrate", "api:1")]}])
	names := {c.name | c := kubernetes.all_containers[_]} with input as pod
	names == {"api", "migrate"}
	count(kubernetes.containers) == 1 with input as pod
}

test_description {
	kubernetes.description == "Deployment web/api" with input as fixtures.deployment([])
	kubernetes.description == "Service default/db" with input as {"kind": "Service", "metadata": {"name": "db"}}
}

test_labels_and_annotations {
	kubernetes.label(fixtures.pod([]), "app") == "api"
	not kubernetes.label(fixtures.pod([]), "team")
	not kubernetes.annotation(fixtures.pod([]), "team")
}

test_param_default {
	kubernetes.param("missing", 7) == 7 with input as fixtures.review(fixtures.pod([]), {})
	kubernetes.param("limit", 7) == 3 with input as fixtures.review(fixtures.pod([]), {"limit": 3})
}

test_every_workload_kind_has_a_pod_spec {
	every kind in kubernetes.workload_kinds {
		obj := json.patch(fixtures.deployment([]), [{"op": "replace", "path": "/kind", "value": kind}])
		kubernetes.pod_spec(obj) == {"containers": []}
	}
}
