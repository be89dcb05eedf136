# Services may not be exposed on node ports, and load balancers must be
# internal unless the constraint allows external ones.
#
# parameters:
#   allowExternalLoadBalancers: false
package k8sblocknodeport

import data.lib.kubernetes
import future.keywords

internal_annotations = {
	"networking.gke.io/load-balancer-type": "Internal",
	"service.beta.kubernetes.io/aws-load-balancer-internal": "true",
	"service.beta.kubernetes.io/azure-load-balancer-internal": "true",
}

is_service if {
	kubernetes.kind == "Service"
}

violation contains {"msg": msg} if {
	is_service
	kubernetes.resource.spec.type == "NodePort"
	msg := sprintf("%v: services of type NodePort are not allowed", [kubernetes.description])
}

violation contains {"msg": msg, "details": {"port": port.name, "nodePort": port.nodePort}} if {
	is_service
	port := kubernetes.resource.spec.ports[_]
	port.nodePort
	msg := sprintf("%v: port %v requests node port %v", [kubernetes.description, port.name, port.nodePort])
}

violation contains {"msg": msg} if {
	is_service
	kubernetes.resource.spec.type == "LoadBalancer"
	not kubernetes.param("allowExternalLoadBalancers", false)
	not internal
	msg := sprintf("%v: load balancers must be internal", [kubernetes.description])
}

internal if {
	some key
	value := internal_annotations[key]
	kubernetes.annotation(kubernetes.resource, key) == value
}
