package lib.containers_test

import data.lib.containers
import data.lib.test_fixtures as fx
import rego.v1

test_of_lists_every_container_list if {
	obj := fx.pod_with_init("p", [fx.container("setup", "busybox")], [fx.container("app", "nginx")])
	names := [sprintf("%s:%s", [containers.kind_of(c), c.name]) | some c in containers.of(obj)]
	names == ["container:app", "initContainer:setup"]
}

test_image_parts if {
	containers.registry("nginx") == "docker.io"
	containers.registry("library/nginx:1.25") == "docker.io"
	containers.registry("registry.example.com:5000/team/app:2.1") == "registry.example.com:5000"
	containers.registry("localhost/app") == "localhost"
	containers.tag("nginx") == "latest"
	containers.tag("nginx:1.25") == "1.25"
	containers.tag("registry.example.com:5000/team/app") == "latest"
	not containers.tag("nginx@sha256:abc")
	containers.digest("nginx@sha256:abc") == "sha256:abc"
}

test_quantities if {
	containers.memory_bytes("1Gi") == 1073741824
	containers.memory_bytes("512Mi") == 536870912
	containers.memory_bytes(1024) == 1024
	containers.cpu_millis("250m") == 250
	containers.cpu_millis("2") == 2000
	containers.cpu_millis(0.5) == 500
}

test_image_exemptions if {
	containers.image_exempt("registry.k8s.io/pause:3.9", ["registry.k8s.io/pause:*"])
	containers.image_exempt("nginx:1.25", ["nginx:1.25"])
	not containers.image_exempt("nginx:1.26", ["nginx:1.25"])
	containers.exempt({"image": "registry.k8s.io/kube-proxy:v1.30.0"})
}
