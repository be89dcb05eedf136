package k8spsphostnamespace

import data.lib.test_fixtures as fx
import rego.v1

web := fx.container("web", "registry.example.com/web:1")

with_port(c, container_port, host_port) := object.union(c, {"ports": [{"containerPort": container_port, "hostPort": host_port}]})

host_pod(fields) := fx.with_pod_spec(fx.pod("node-tool", [web]), fields)

test_plain_pod_passes if {
	count(violation) == 0 with input as fx.review(fx.pod("web", [web]), {})
}

test_host_pid_and_ipc_are_refused if {
	results := violation with input as fx.review(host_pod({"hostPID": true, "hostIPC": true}), {})
	{r.details.field | some r in results} == {"hostPID", "hostIPC"}
	some r in results
	r.msg == "Sharing the host namespace is not allowed: node-tool (hostPID)"
}

test_false_flags_are_fine if {
	count(violation) == 0 with input as fx.review(host_pod({"hostPID": false, "hostNetwork": false}), {})
}

test_host_network_can_be_allowed if {
	pod := host_pod({"hostNetwork": true})
	count(violation) == 1 with input as fx.review(pod, {})
	count(violation) == 0 with input as fx.review(pod, {"allowHostNetwork": true})
}

test_host_ports_outside_the_range if {
	pod := fx.pod("web", [with_port(web, 8080, 80)])
	results := violation with input as fx.review(pod, {"hostPorts": {"min": 30000, "max": 32767}})
	results == {{"msg": "container <web> uses a disallowed hostPort <80>"}}
}

test_host_ports_inside_the_range if {
	pod := fx.pod("web", [with_port(web, 8080, 30080)])
	count(violation) == 0 with input as fx.review(pod, {"hostPorts": {"min": 30000, "max": 32767}})
}

test_container_ports_alone_are_fine if {
	pod := fx.pod("web", [object.union(web, {"ports": [{"containerPort": 8080}]})])
	count(violation) == 0 with input as fx.review(pod, {})
}
