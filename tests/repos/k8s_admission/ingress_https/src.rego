# Ingresses must be HTTPS only: a TLS section covering every host, plain HTTP
# switched off, and no host already served by another Ingress.
package k8shttpsonly

import data.lib.k8s
import rego.v1

is_ingress if {
	k8s.kind == "Ingress"
	k8s.resource.apiVersion in {"extensions/v1beta1", "networking.k8s.io/v1beta1", "networking.k8s.io/v1"}
}

http_disabled(ing) if k8s.annotations(ing)["kubernetes.io/ingress.allow-http"] == "false"

violation contains {"msg": msg} if {
	is_ingress
	not http_disabled(k8s.resource)
	msg := "Ingress should be https. tls configuration and allow-http=false annotation are required"
}

violation contains {"msg": msg, "details": {"hosts": uncovered}} if {
	is_ingress
	certificates := k8s.tls_hosts(k8s.resource)
	uncovered := {host |
		some host in k8s.ingress_hosts(k8s.resource)
		not covered(certificates, host)
	}
	count(uncovered) > 0
	msg := sprintf("hosts without a TLS certificate: %v", [concat(", ", sort(uncovered))])
}

covered(certificates, host) if {
	some cert in certificates
	k8s.tls_covers(cert, host)
}

# Two Ingresses may not claim the same host (an update of the same Ingress is fine).
violation contains {"msg": msg} if {
	is_ingress
	some host in k8s.ingress_hosts(k8s.resource)
	some [other_ns, other_name, other] in k8s.cached_ingresses
	[other_ns, other_name] != [k8s.namespace, k8s.name]
	host in k8s.ingress_hosts(other)
	msg := sprintf("ingress host conflicts with an existing ingress <%v/%v>: %v", [other_ns, other_name, host])
}
