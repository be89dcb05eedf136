# Authorization for the orders API, asked by the gateway on every request.
#
# Input: {"request": {"method", "path", "headers", "time", "source_ip"}}.
#
# A request is allowed when its route is public, or when it carries a valid
# bearer token that grants every permission its route requires and no rule
# in deny.rego objects. decision.rego puts the answer together.
package authz

import data.authz.roles
import data.authz.routes
import data.lib.jwt as token
import data.lib.strings
import data.lib.time as clock
import rego.v1

default allow := false

allow if public_route

allow if {
	not public_route
	claims
	count(required) > 0
	every perm in required {
		roles.grants(user_permissions, perm)
	}
	count(deny) == 0
}

# The request, normalized: upper-case method, clean path, lower-case header names.
request := {
	"method": upper(input.request.method),
	"path": strings.normalize_path(input.request.path),
	"headers": strings.lower_keys(object.get(input.request, "headers", {})),
	"time_ns": clock.parse(input.request.time),
	"source_ip": object.get(input.request, "source_ip", "0.0.0.0"),
}

public_route if routes.public(request.method, request.path)

bearer := token.bearer(request.headers)

claims := token.verified_claims(bearer, data.config.jwt, request.time_ns)

# Machine clients authenticate with the client-credentials flow: their
# permissions are the token's scopes, not roles.
is_service if claims.client_type == "service"

user_permissions := roles.permissions(claims.roles) if not is_service

user_permissions := token.scopes(claims) if is_service

required := routes.required_permissions(request.method, request.path)
