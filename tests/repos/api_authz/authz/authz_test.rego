# End-to-end tests of data.authz: requests in, decisions out.
package authz_test

import data.authz
import rego.v1

# ---- public routes

test_health_is_public if {
	authz.allow with input as anonymous_request("GET", "/health")
}

test_product_pages_are_public if {
	authz.allow with input as anonymous_request("GET", "/api/v1/products/42")
}

test_public_routes_are_read_only if {
	not authz.allow with input as anonymous_request("POST", "/api/v1/products")
}

# ---- authentication

test_anonymous_cannot_list_orders if {
	d := authz.decision with input as anonymous_request("GET", "/api/v1/orders")
	d.allow == false
	d.status == 401
	d.reasons == ["missing bearer token"]
	d.subject == "anonymous"
}

test_expired_token_is_rejected if {
	d := authz.decision with input as api_request("GET", "/api/v1/orders", expired_token)
	not d.allow
	d.status == 401
	d.reasons == ["invalid or expired token"]
}

test_token_not_yet_valid_is_rejected if {
	not authz.allow with input as api_request("GET", "/api/v1/orders", not_yet_valid_token)
}

test_forged_token_is_rejected if {
	"invalid or expired token" in authz.deny with input as api_request("DELETE", "/api/v1/orders/1", forged_token)
}

test_wrong_issuer_is_rejected if {
	not authz.allow with input as api_request("GET", "/api/v1/orders", wrong_issuer_token)
}

test_wrong_audience_is_rejected if {
	not authz.allow with input as api_request("GET", "/api/v1/orders", wrong_audience_token)
}

test_malformed_token_is_rejected if {
	inp := {"request": {
		"method": "GET",
		"path": "/api/v1/orders",
		"time": request_time,
		"headers": {"Authorization": "Bearer not-a-jwt"},
	}}
	authz.reasons == ["invalid or expired token"] with input as inp
}

test_basic_auth_is_not_a_bearer_token if {
	inp := json.patch(anonymous_request("GET", "/api/v1/orders"), [{
		"op": "add",
		"path": "/request/headers/Authorization",
		"value": "Basic YWxpY2U6c2VjcmV0",
	}])
	authz.reasons == ["missing bearer token"] with input as inp
}

test_header_names_and_methods_are_case_insensitive if {
	inp := {"request": {
		"method": "get",
		"path": "/api/v1/orders",
		"time": request_time,
		"headers": {"authorization": concat(" ", ["bearer", viewer_token])},
	}}
	authz.allow with input as inp
}

test_old_tokens_must_be_refreshed if {
	# 2025-05-01 is 61 days after the token was issued.
	inp := at(api_request("GET", "/api/v1/orders", editor_token), "2025-05-01T10:00:00Z")
	authz.reasons == ["token issued 61 days ago exceeds the 30 day limit"] with input as inp
}

# ---- roles and permissions

test_viewer_can_read_orders if {
	authz.allow with input as api_request("GET", "/api/v1/orders", viewer_token)
	authz.allow with input as api_request("GET", "/api/v1/orders/981", viewer_token)
}

test_viewer_cannot_create_orders if {
	d := authz.decision with input as api_request("POST", "/api/v1/orders", viewer_token)
	d.allow == false
	d.status == 403
	d.reasons == [`carol lacks permission "orders:write"`]
}

test_editor_can_create_and_update_orders if {
	authz.allow with input as api_request("POST", "/api/v1/orders", editor_token)
	authz.allow with input as api_request("PATCH", "/api/v1/orders/17", editor_token)
	authz.allow with input as api_request("PUT", "/api/v1/orders/17", editor_token)
}

test_editor_cannot_delete_orders if {
	not authz.allow with input as api_request("DELETE", "/api/v1/orders/17", editor_token)
}

test_admin_can_delete if {
	authz.allow with input as api_request("DELETE", "/api/v1/orders/17", admin_token)
}

test_admin_manages_users_through_wildcard if {
	every method in ["GET", "POST", "DELETE"] {
		authz.allow with input as api_request(method, "/api/v1/users/42/sessions", admin_token)
	}
}

test_editor_cannot_manage_users if {
	reasons := authz.reasons with input as api_request("GET", "/api/v1/users/42", editor_token)
	reasons == [`bob lacks permission "users:admin"`]
}

test_user_without_roles_is_forbidden if {
	d := authz.decision with input as api_request("GET", "/api/v1/orders", no_role_token)
	d.status == 403
	count(d.reasons) == 1
	startswith(d.reasons[0], "erin lacks permission")
}

test_admin_inherits_support_permissions if {
	authz.allow with input as api_request("GET", "/api/v1/customers/c-77", admin_token)
	not authz.allow with input as api_request("GET", "/api/v1/customers/c-77", editor_token)
}

test_mocked_roles_change_the_outcome if {
	roles := {
		"viewer": {"permissions": ["orders:*"]},
		"editor": {"permissions": []},
	}
	authz.allow with input as api_request("DELETE", "/api/v1/orders/5", viewer_token) with data.roles as roles
	not authz.allow with input as api_request("POST", "/api/v1/orders", editor_token) with data.roles as roles
}

test_unknown_route_is_refused if {
	d := authz.decision with input as api_request("GET", "/api/v1/invoices", admin_token)
	d.status == 403
	d.reasons == ["no route for GET /api/v1/invoices"]
}

# ---- service accounts

test_service_token_uses_its_scopes if {
	authz.allow with input as api_request("GET", "/api/v1/orders", service_token)
	authz.allow with input as api_request("POST", "/api/v1/reports/daily/export", service_token)
}

test_service_token_ignores_its_roles if {
	# The token lists the viewer role, which would grant products:read, but
	# service clients only get their scopes.
	reasons := authz.reasons with input as api_request("GET", "/api/v1/reports/daily", service_token)
	reasons == [`svc-reporting lacks permission "reports:read"`]
}

# ---- tenants, networks and hours

test_tenant_users_stay_in_their_tenant if {
	reasons := authz.reasons with input as api_request("GET", "/api/v1/tenants/acme/orders", viewer_token)
	reasons == [`tenant "globex" may not access tenant "acme"`]
}

test_tenant_users_see_their_own_orders if {
	authz.allow with input as api_request("GET", "/api/v1/tenants/globex/orders/9", viewer_token)
}

test_admin_crosses_tenants if {
	authz.allow with input as api_request("GET", "/api/v1/tenants/globex/orders", admin_token)
}

test_blocked_network_is_refused if {
	inp := from_ip(api_request("GET", "/api/v1/orders", admin_token), "203.0.113.7")
	d := authz.decision with input as inp
	not d.allow
	d.reasons == ["source 203.0.113.7 is in blocked network 203.0.113.0/24"]
}

test_export_during_business_hours if {
	authz.allow with input as api_request("POST", "/api/v1/reports/monthly/export", auditor_token)
}

test_export_on_saturday_is_refused if {
	inp := at(api_request("POST", "/api/v1/reports/monthly/export", auditor_token), "2025-03-15T10:30:00Z")
	authz.reasons == ["exports are only allowed during business hours"] with input as inp
}

test_export_after_hours_is_refused if {
	inp := at(api_request("POST", "/api/v1/reports/monthly/export", auditor_token), "2025-03-12T19:05:00Z")
	not authz.allow with input as inp
}

test_maintenance_mode_keeps_public_routes if {
	authz.allow with input as anonymous_request("GET", "/health") with data.config.maintenance as true
	reasons := authz.reasons with input as api_request("GET", "/api/v1/orders", admin_token)
		with data.config.maintenance as true
	reasons == ["service is in maintenance mode"]
}

# ---- the decision document

test_decision_for_editor if {
	d := authz.decision with input as api_request("GET", "/api/v1/orders/17", editor_token)
	d == {
		"allow": true,
		"reasons": [],
		"subject": "bob",
		"status": 200,
		"headers": {
			"x-authz-subject": "bob",
			"x-authz-tenant": "acme",
			"x-authz-roles": "editor",
			"x-authz-decision": "allow",
		},
	}
}

test_service_headers_carry_no_roles if {
	headers := authz.upstream_headers with input as api_request("GET", "/api/v1/orders", service_token)
	not "x-authz-roles" in object.keys(headers)
	headers["x-authz-subject"] == "svc-reporting"
}

test_denied_request_headers if {
	headers := authz.upstream_headers with input as anonymous_request("GET", "/api/v1/orders")
	headers == {"x-authz-subject": "anonymous", "x-authz-decision": "deny"}
}

test_audit_records_rejected_tokens if {
	entry := authz.audit with input as api_request("DELETE", "/api/v1/orders/3", forged_token)
	entry.allow == false
	entry.alg == "HS256"
	entry.issuer == "https://auth.example.com"
	entry.token == "eyJhbGciOiJI..."
	entry.subject == "anonymous"
	entry.token_sha256 == "c89fc825a2a603852cd5cb96d8e42144808ea9871dbc0e5d718aa56ad34b2759"
}

test_audit_for_anonymous_requests if {
	entry := authz.audit with input as anonymous_request("GET", "//api/v1//orders/")
	entry == {
		"method": "GET",
		"path": "/api/v1/orders",
		"allow": false,
		"subject": "anonymous",
		"reason_count": 1,
	}
}

test_decision_json_round_trips if {
	text := authz.decision_json with input as api_request("GET", "/api/v1/orders", viewer_token)
	parsed := json.unmarshal(text)
	json.filter(parsed, ["allow", "status"]) == {"allow": true, "status": 200}
	parsed.headers["x-authz-tenant"] == "globex"
}

test_many_reasons_are_sorted if {
	inp := from_ip(api_request("GET", "/api/v1/tenants/acme/orders", no_role_token), "198.51.100.20")
	reasons := authz.reasons with input as inp
	reasons == [
		`erin lacks permission "orders:read"`,
		"source 198.51.100.20 is in blocked network 198.51.100.0/24",
	]
}

# ---- client versions

with_client_version(req, version) := object.union(req, {"request": {"headers": {"X-Client-Version": version}}})

test_current_clients_pass if {
	authz.allow with input as with_client_version(api_request("GET", "/api/v1/orders", viewer_token), "2.4.0")
	authz.allow with input as with_client_version(api_request("GET", "/api/v1/orders", viewer_token), "v2.10.1")
}

test_outdated_client_is_refused if {
	inp := with_client_version(api_request("GET", "/api/v1/orders", viewer_token), "2.3.9")
	authz.reasons == ["client version 2.3.9 is older than 2.4.0"] with input as inp
}

test_malformed_client_version if {
	inp := with_client_version(api_request("GET", "/api/v1/orders", viewer_token), "2.x")
	authz.reasons == [`malformed client version "2.x"`] with input as inp
}

# ---- mocking

# Stands in for signature verification: any token is zed, an admin.
fake_claims(_, _, _) := {"sub": "zed", "roles": ["admin"], "tenant": "acme", "iat": 1740787200}

test_verification_can_be_mocked if {
	inp := api_request("DELETE", "/api/v1/orders/1", "opaque-token")
	not authz.allow with input as inp
	authz.allow with input as inp with data.lib.jwt.verified_claims as fake_claims
	authz.subject == "zed" with input as inp with data.lib.jwt.verified_claims as fake_claims
}

fake_decode_verify(_, constraints) := [true, {"alg": "HS256"}, {
	"sub": "mock",
	"roles": ["viewer"],
	"tenant": "acme",
	"iat": 1740787200,
	"checked_at": constraints.time,
}]

test_builtin_can_be_mocked if {
	inp := api_request("GET", "/api/v1/orders", "aaa.bbb.ccc")
	c := authz.claims with input as inp with io.jwt.decode_verify as fake_decode_verify
	c.sub == "mock"
	c.checked_at == 1741775400000000000
}

test_weekday_can_be_mocked if {
	inp := api_request("POST", "/api/v1/reports/monthly/export", auditor_token)
	not authz.allow with input as inp with time.weekday as "Sunday"
}
