# The decision for one inventory document.
package inventory.main

import data.inventory.azure
import data.inventory.k8s
import data.inventory.lib
import rego.v1

deny := k8s.deny | azure.deny

allow := count(deny) == 0

severity := "high" if count(deny) >= 3

else := "medium" if count(deny) > 0

else := "none"

report := {
	"id": lib.resource_id,
	"owner": owner,
	"allow": allow,
	"severity": severity,
	"violations": deny,
	"warnings": k8s.warn,
}

owner := k8s.owner if lib.is_kubernetes

owner := azure.owner if not lib.is_kubernetes

default owner := "unknown"
