package authz.routes_test

import data.authz.routes
import rego.v1

test_order_routes_need_one_permission_each if {
	routes.required_permissions("GET", "/api/v1/orders") == {"orders:read"}
	routes.required_permissions("DELETE", "/api/v1/orders/12") == {"orders:delete"}
	routes.required_permissions("POST", "/api/v1/orders") == {"orders:write"}
}

test_single_star_stops_at_a_slash if {
	routes.required_permissions("GET", "/api/v1/orders/12/lines") == set()
}

test_double_star_spans_segments if {
	routes.required_permissions("GET", "/api/v1/reports/2025/03/summary") == {"reports:read"}
}

test_any_method_route if {
	count(routes.matching("OPTIONS", "/api/v1/users/42")) == 1
}

test_public_routes if {
	routes.public("GET", "/health")
	not routes.public("POST", "/health")
	not routes.public("GET", "/api/v1/orders")
}

test_tenant_of_a_path if {
	routes.tenant_of("/api/v1/tenants/acme/orders") == "acme"
	not routes.tenant_of("/api/v1/orders/1")
	not routes.tenant_of("/api/v1/tenants")
}

test_resource_of_a_path if {
	routes.resource("/api/v1/orders/1") == "orders"
}

test_allowed_methods if {
	routes.allowed_methods("/api/v1/orders/3") == {"GET", "PUT", "PATCH", "DELETE"}
	routes.allowed_methods("/api/v1/users/7") == {"*"}
}

test_export_route_is_restricted_to_office_hours if {
	routes.business_hours_only("POST", "/api/v1/reports/q1/export")
	not routes.business_hours_only("GET", "/api/v1/reports/q1")
}

test_mocked_route_table if {
	table := {
		"public": [],
		"protected": [{"method": "GET", "path": "/v2/**", "permission": "v2:read"}],
	}
	routes.required_permissions("GET", "/v2/anything/at/all") == {"v2:read"} with data.routes as table
	not routes.public("GET", "/health") with data.routes as table
}
