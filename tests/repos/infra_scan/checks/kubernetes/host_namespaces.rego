# METADATA
# title: Host namespace shared
# description: Pods must not share the host's network, PID or IPC namespace.
# custom:
#   id: K8S-002
#   severity: HIGH
package checks.kubernetes.host_namespaces

import data.lib.kubernetes as k8s
import data.lib.result

namespaces := ["hostNetwork", "hostPID", "hostIPC"]

deny contains res if {
	some field in namespaces
	k8s.pod_spec[field] == true
	res := result.new(sprintf("%s sets %s", [k8s.name, field]), k8s.name, rego.metadata.chain())
}
