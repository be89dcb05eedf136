# Containers may only add allowed Linux capabilities and must drop the
# required ones.
#
# parameters:
#   allowedCapabilities:      ["NET_BIND_SERVICE"]   ("*" allows any)
#   requiredDropCapabilities: ["NET_RAW"]
package k8spspcapabilities

import data.lib.containers
import data.lib.k8s
import rego.v1

# Capability names are case-insensitive and may carry a CAP_ prefix.
normalize(caps) := {trim_prefix(upper(cap), "CAP_") | some cap in caps}

capabilities(c, which) := normalize(object.get(c, ["securityContext", "capabilities", which], []))

allowed := normalize(k8s.flag("allowedCapabilities", []))

required_drops := normalize(k8s.flag("requiredDropCapabilities", []))

violation contains {"msg": msg, "details": {"disallowed": disallowed}} if {
	not k8s.exempt
	not "*" in allowed
	some c in containers.reviewed
	not containers.exempt(c)
	disallowed := capabilities(c, "add") - allowed
	count(disallowed) > 0
	msg := sprintf("container <%v> has a disallowed capability. Allowed capabilities are %v", [c.name, sort(allowed)])
}

violation contains {"msg": msg, "details": {"missing": missing}} if {
	not k8s.exempt
	some c in containers.reviewed
	not containers.exempt(c)
	dropped := capabilities(c, "drop")
	not "ALL" in dropped
	missing := required_drops - dropped
	count(missing) > 0
	msg := sprintf("container <%v> is not dropping all required capabilities. Container must drop all of %v", [c.name, sort(required_drops)])
}
