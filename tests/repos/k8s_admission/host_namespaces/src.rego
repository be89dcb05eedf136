# Pods may not share the host's PID, IPC or network namespace, and may only
# bind host ports in the allowed range.
#
# parameters:
#   allowHostNetwork: false
#   hostPorts: {"min": 30000, "max": 32767}
package k8spsphostnamespace

import data.lib.containers as ctr
import data.lib.k8s as kube
import rego.v1

namespaces := ["hostPID", "hostIPC", "hostNetwork"]

allowed("hostNetwork") if kube.flag("allowHostNetwork", false) == true

violation contains {"msg": msg, "details": {"field": field}} if {
	not kube.exempt
	spec := kube.pod_spec(kube.resource)
	some field in namespaces
	spec[field] == true
	not allowed(field)
	msg := sprintf("Sharing the host namespace is not allowed: %v (%v)", [kube.name, field])
}

port_allowed(port) if {
	range := object.get(kube.parameters, "hostPorts", {"min": 0, "max": 0})
	port >= range.min
	port <= range.max
}

violation contains {"msg": msg} if {
	not kube.exempt
	some c in ctr.reviewed
	some port in object.get(c, "ports", [])
	host_port := port.hostPort
	not port_allowed(host_port)
	msg := sprintf("container <%v> uses a disallowed hostPort <%v>", [c.name, host_port])
}
