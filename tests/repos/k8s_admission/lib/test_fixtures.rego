# Builders for admission review inputs, shared by the constraint tests.
package lib.test_fixtures

import rego.v1

container(name, image) := {"name": name, "image": image}

with_security_context(c, sc) := object.union(c, {"securityContext": sc})

with_limits(c, limits) := object.union(c, {"resources": {"limits": limits}})

pod(name, containers) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
	"spec": {"containers": containers},
}

pod_with_init(name, init, containers) := json.patch(pod(name, containers), [{"op": "add", "path": "/spec/initContainers", "value": init}])

deployment(name, replicas, containers) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
	"spec": {
		"replicas": replicas,
		"selector": {"matchLabels": {"app": name}},
		"template": {
			"metadata": {"labels": {"app": name}},
			"spec": {"containers": containers},
		},
	},
}

cronjob(name, containers) := {
	"apiVersion": "batch/v1",
	"kind": "CronJob",
	"metadata": {"name": name, "namespace": "shop"},
	"spec": {
		"schedule": "*/5 * * * *",
		"jobTemplate": {"spec": {"template": {"spec": {"containers": containers, "restartPolicy": "OnFailure"}}}},
	},
}

ingress(name, hosts, tls_hosts, annotations) := {
	"apiVersion": "networking.k8s.io/v1",
	"kind": "Ingress",
	"metadata": {"name": name, "namespace": "shop", "annotations": annotations},
	"spec": {
		"rules": [{"host": h, "http": {"paths": [{"path": "/", "pathType": "Prefix"}]}} | some h in hosts],
		"tls": [{"hosts": tls_hosts, "secretName": sprintf("%s-tls", [name])} | count(tls_hosts) > 0],
	},
}

with_labels(obj, labels) := json.patch(obj, [{"op": "add", "path": "/metadata/labels", "value": labels}])

in_namespace(obj, ns) := object.union(obj, {"metadata": {"namespace": ns}})

with_pod_spec(obj, fields) := object.union(obj, {"spec": fields}) if obj.kind == "Pod"

api_group(kind) := "apps" if {
	kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}
} else := "batch" if {
	kind in {"Job", "CronJob"}
} else := "networking.k8s.io" if {
	kind == "Ingress"
} else := "autoscaling" if {
	kind == "HorizontalPodAutoscaler"
} else := ""

# An admission review of `obj` with constraint `parameters`.
review(obj, parameters) := {
	"review": {
		"kind": {"group": api_group(obj.kind), "version": "v1", "kind": obj.kind},
		"operation": "CREATE",
		"name": obj.metadata.name,
		"namespace": object.get(obj, ["metadata", "namespace"], ""),
		"object": obj,
	},
	"parameters": parameters,
}
