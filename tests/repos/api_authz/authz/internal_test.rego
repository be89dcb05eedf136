# Tests of the building blocks of package authz, written in the package
# itself so that they can use its rules and functions by their short names.
package authz

import data.authz_test as fixtures
import rego.v1

test_request_is_normalized if {
	inp := {"request": {
		"method": "patch",
		"path": "/api//v1/orders/9/",
		"time": "2025-03-12T10:30:00Z",
		"headers": {"X-Request-Id": "abc", "Authorization": "Bearer x.y.z"},
	}}
	request == {
		"method": "PATCH",
		"path": "/api/v1/orders/9",
		"headers": {"x-request-id": "abc", "authorization": "Bearer x.y.z"},
		"time_ns": 1741775400000000000,
		"source_ip": "0.0.0.0",
	} with input as inp
}

test_bearer_is_taken_from_the_header if {
	bearer == fixtures.viewer_token with input as fixtures.api_request("GET", "/", fixtures.viewer_token)
}

test_claims_of_a_valid_token if {
	c := claims with input as fixtures.api_request("GET", "/api/v1/orders", fixtures.admin_token)
	c.sub == "alice"
	c.name == "Alice Admin"
	c.roles == ["admin"]
}

test_no_claims_for_an_expired_token if {
	not claims with input as fixtures.api_request("GET", "/api/v1/orders", fixtures.expired_token)
}

test_editor_permissions_include_inherited_ones if {
	perms := user_permissions with input as fixtures.api_request("GET", "/", fixtures.editor_token)
	perms == {"orders:read", "orders:write", "orders:update", "products:read"}
}

test_service_permissions_are_its_scopes if {
	perms := user_permissions with input as fixtures.api_request("GET", "/", fixtures.service_token)
	perms == {"reports:export", "orders:read"}
}

test_status_codes if {
	status(true, set()) == 200
	status(false, {"missing bearer token"}) == 401
	status(false, {"invalid or expired token", "no route for GET /"}) == 401
	status(false, {"something else"}) == 403
}

test_required_permissions_of_an_export if {
	required == {"reports:export"} with input as fixtures.api_request("POST", "/api/v1/reports/x/export", "t")
	required == {"reports:read"} with input as fixtures.api_request("GET", "/api/v1/reports/x/export", "t")
}

test_subject_defaults_to_anonymous if {
	subject == "anonymous" with input as fixtures.anonymous_request("GET", "/api/v1/orders")
}

test_public_route_is_not_denied if {
	count(deny) == 0 with input as fixtures.anonymous_request("GET", "/health")
}
