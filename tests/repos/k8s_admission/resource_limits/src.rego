# Every container must set cpu and memory limits, no higher than the
# constraint's maximums.
#
# parameters:
#   cpu:    "2"     (cores, or "500m")
#   memory: "1Gi"
package k8scontainerlimits

import data.lib.containers
import data.lib.k8s
import rego.v1

# Ephemeral (debug) containers cannot set resources.
checked contains c if {
	some c in containers.reviewed
	c._field != "ephemeralContainers"
	not containers.exempt(c)
}

limits(c) := object.get(c, ["resources", "limits"], {})

violation contains {"msg": msg} if {
	not k8s.exempt
	some c in checked
	some resource in ["cpu", "memory"]
	not limits(c)[resource]
	msg := sprintf("container <%v> has no %v limit", [c.name, resource])
}

violation contains {"msg": msg, "details": {"limit": limit, "max": max}} if {
	not k8s.exempt
	some c in checked
	limit := limits(c).memory
	max := k8s.parameters.memory
	containers.memory_bytes(limit) > containers.memory_bytes(max)
	msg := sprintf("container <%v> memory limit <%v> is higher than the maximum allowed of <%v>", [c.name, limit, max])
}

violation contains {"msg": msg, "details": {"limit": limit, "max": max}} if {
	not k8s.exempt
	some c in checked
	limit := limits(c).cpu
	max := k8s.parameters.cpu
	containers.cpu_millis(limit) > containers.cpu_millis(max)
	msg := sprintf("container <%v> cpu limit <%v> is higher than the maximum allowed of <%v>", [c.name, limit, max])
}
