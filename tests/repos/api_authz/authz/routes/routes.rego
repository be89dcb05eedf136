# Matching requests against the route table in data.routes (routes/data.yaml).
package authz.routes

import data.lib.strings
import rego.v1

matches(route, method, path) if {
	route.method in {method, "*"}
	glob.match(route.path, ["/"], path)
}

public(method, path) if {
	some route in data.routes.public
	matches(route, method, path)
}

# The protected routes a request matches, in table order.
matching(method, path) := [route |
	some route in data.routes.protected
	matches(route, method, path)
]

# Every permission the request needs: one per matching route.
required_permissions(method, path) := {route.permission | some route in matching(method, path)}

# Routes marked `business_hours: true` may only be called during office hours.
business_hours_only(method, path) if {
	some route in matching(method, path)
	object.get(route, "business_hours", false)
}

# The tenant of a tenant-scoped path: /api/v1/tenants/<tenant>/...
tenant_of(path) := segments[3] if {
	segments := strings.segments(path)
	count(segments) > 3
	segments[2] == "tenants"
}

# The resource a path is about, for messages: /api/v1/orders/42 -> "orders".
resource(path) := strings.segments(path)[2]

# Every method that some route allows on a path (for an Allow header).
allowed_methods(path) := {route.method |
	some route in array.concat(data.routes.public, data.routes.protected)
	glob.match(route.path, ["/"], path)
}
