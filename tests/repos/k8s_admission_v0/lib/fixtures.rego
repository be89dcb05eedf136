# Objects and reviews for the tests.
package lib.fixtures


container(name, image) = {"name": name, "image": image}

merge(obj, patch) = object.union(obj, patch)

pod(containers) = {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "api", "namespace": "web", "labels": {"app": "api"}},
	"spec": {"containers": containers},
}

deployment(containers) = {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "api", "namespace": "web"},
	"spec": {
		"replicas": 2,
		"template": {
			"metadata": {"labels": {"app": "api"}},
			"spec": {"containers": containers},
		},
	},
}

service(type, ports) = {
	"apiVersion": "v1",
	"kind": "Service",
	"metadata": {"name": "api", "namespace": "web", "annotations": {}},
	"spec": {"type": type, "selector": {"app": "api"}, "ports": ports},
}

port(n) = {"name": sprintf("port-%d", [n]), "port": n, "targetPort": n, "protocol": "TCP"}

pvc(size, class) = {
	"apiVersion": "v1",
	"kind": "PersistentVolumeClaim",
	"metadata": {"name": "data", "namespace": "web"},
	"spec": {
		"accessModes": ["ReadWriteOnce"],
		"storageClassName": class,
		"resources": {"requests": {"storage": size}},
	},
}

# An admission review, as the admission controller sends it.
review(obj, params) = {
	"review": {
		"kind": {"kind": obj.kind},
		"operation": "CREATE",
		"object": obj,
	},
	"parameters": params,
}

http_probe(path, port) = {"httpGet": {"path": path, "port": port}, "periodSeconds": 10}

tcp_probe(port) = {"tcpSocket": {"port": port}}
