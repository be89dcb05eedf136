# Networking helpers; part of package lib.k8s.
package lib.k8s

import rego.v1

# The hosts an Ingress routes traffic for.
ingress_hosts(ing) := {rule.host | some rule in object.get(ing, ["spec", "rules"], [])}

# The hosts its TLS section has certificates for (may hold wildcards).
tls_hosts(ing) := {host |
	some tls in object.get(ing, ["spec", "tls"], [])
	some host in tls.hosts
}

# A TLS host covers a host exactly or through a "*.example.com" wildcard.
tls_covers(tls_host, host) if tls_host == host

tls_covers(tls_host, host) if {
	startswith(tls_host, "*.")
	glob.match(tls_host, ["."], host)
}

# Ingress objects the admission controller has cached, as
# [namespace, name, object] triples (data.inventory is filled by the sync).
cached_ingresses contains [ns, name, obj] if {
	some ns, groups in data.inventory.namespace
	some group in groups
	some name, obj in group.Ingress
}
