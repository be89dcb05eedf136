# Containers and images.
package lib.containers

import data.lib.k8s
import rego.v1

fields := ["containers", "initContainers", "ephemeralContainers"]

# Every container of an object, each with "_field" naming the list it is in.
of(obj) := [object.union(c, {"_field": field}) |
	some field in fields
	some c in object.get(k8s.pod_spec(obj), field, [])
]

# The containers of the object under review.
reviewed := of(k8s.resource)

# "container", "initContainer" or "ephemeralContainer", for messages.
kind_of(c) := trim_suffix(c._field, "s")

# An image matches an exemption exactly, or by prefix when the exemption ends in "*".
image_exempt(image, patterns) if {
	some p in patterns
	not endswith(p, "*")
	p == image
}

image_exempt(image, patterns) if {
	some p in patterns
	endswith(p, "*")
	startswith(image, trim_suffix(p, "*"))
}

# Images exempted for the whole cluster, or by the constraint's exemptImages.
exempt(c) if image_exempt(c.image, data.exemptions.images)

exempt(c) if image_exempt(c.image, k8s.flag("exemptImages", []))

# Image references: [registry/]repository[:tag][@digest]

digest(image) := split(image, "@")[1] if contains(image, "@")

registry(image) := first if {
	parts := split(split(image, "@")[0], "/")
	count(parts) > 1
	first := parts[0]
	regex.match(`[.:]|^localhost$`, first)
} else := "docker.io"

tag(image) := t if {
	not contains(image, "@")
	path := split(image, "/")
	parts := split(path[count(path) - 1], ":")
	count(parts) == 2
	t := parts[1]
} else := "latest" if {
	not contains(image, "@")
}

# Memory quantities: numbers are bytes, strings use the Kubernetes suffixes.
memory_bytes(q) := q if {
	is_number(q)
} else := units.parse_bytes(q)

# CPU quantities in millicores: 2, "2", "250m".
cpu_millis(q) := q * 1000 if {
	is_number(q)
} else := to_number(trim_suffix(q, "m")) if {
	endswith(q, "m")
} else := to_number(q) * 1000

security_context(c) := object.get(c, "securityContext", {})
