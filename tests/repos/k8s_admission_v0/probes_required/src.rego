# App containers must define the listed probes, each with a handler.
#
# parameters:
#   probes:     ["livenessProbe", "readinessProbe"]
#   probeTypes: ["httpGet", "tcpSocket", "exec", "grpc"]
package k8srequiredprobes

import data.lib.kubernetes

handler_types = {t | t := kubernetes.parameters.probeTypes[_]}

violation[{"msg": msg}] {
	container := kubernetes.containers[_]
	probe := kubernetes.parameters.probes[_]
	missing_probe(container, probe)
	msg := sprintf("Container <%v> of %v has no <%v>", [container.name, kubernetes.description, probe])
}

violation[{"msg": msg}] {
	container := kubernetes.containers[_]
	probe := kubernetes.parameters.probes[_]
	container[probe]
	not has_handler(container[probe])
	msg := sprintf("Container <%v> of %v has a <%v> without a handler; expected one of %v", [container.name, kubernetes.description, probe, sort(handler_types)])
}

missing_probe(container, probe) {
	not container[probe]
}

has_handler(p) {
	some field
	p[field]
	handler_types[field]
}
