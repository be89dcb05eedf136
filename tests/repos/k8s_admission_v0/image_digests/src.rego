# Images must be referenced by digest, so that a tag cannot be moved under
# a running workload.
#
# parameters:
#   exemptImages: ["registry.example.com/base/*"]
package k8simagedigests

import data.lib.kubernetes
import future.keywords.in

digest_pattern := `@sha256:[a-f0-9]{64}$`

exempt(image) {
	some pattern in kubernetes.param("exemptImages", [])
	glob.match(pattern, ["/"], image)
}

violation[{"msg": msg}] {
	container := kubernetes.all_containers[_]
	not regex.match(digest_pattern, container.image)
	not exempt(container.image)
	msg := sprintf("container <%v> uses an image without a digest: %v", [container.name, container.image])
}

# A digest of the wrong length is a typo rather than a pin.
violation[{"msg": msg}] {
	container := kubernetes.all_containers[_]
	parts := split(container.image, "@sha256:")
	count(parts) == 2
	count(parts[1]) != 64
	msg := sprintf("container <%v> has a malformed digest (%d hex digits)", [container.name, count(parts[1])])
}
