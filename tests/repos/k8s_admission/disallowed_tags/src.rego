# Images must be pinned: no disallowed tags (such as "latest"), and no
# image without a tag or digest.
#
# parameters:
#   tags: ["latest", "dev"]
package k8sdisallowedtags

import data.lib.containers
import data.lib.k8s
import rego.v1

disallowed := {lower(t) | some t in k8s.parameters.tags}

violation contains {"msg": msg} if {
	not k8s.exempt
	some c in containers.reviewed
	not containers.exempt(c)
	tag := containers.tag(c.image)
	lower(tag) in disallowed
	msg := sprintf("container <%v> uses a disallowed tag <%v>; disallowed tags are %v", [c.name, c.image, k8s.parameters.tags])
}

violation contains {"msg": msg} if {
	not k8s.exempt
	some c in containers.reviewed
	not containers.exempt(c)
	not contains(c.image, "@")
	not regex.match(`:[\w][\w.-]{0,127}$`, c.image)
	msg := sprintf("container <%v> didn't specify an image tag <%v>", [c.name, c.image])
}
