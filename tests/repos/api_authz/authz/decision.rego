# The decision document the gateway reads: data.authz.decision.
package authz

import data.lib.jwt as token
import data.lib.strings
import rego.v1

default subject := "anonymous"

subject := claims.sub

reasons := sort(deny)

decision := {
	"allow": allow,
	"reasons": reasons,
	"subject": subject,
	"status": status(allow, deny),
	"headers": upstream_headers,
}

# Failures that call for a new token (401) rather than more rights (403).
authentication_failures := {"missing bearer token", "invalid or expired token"}

status(true, _) := 200

status(false, why) := 401 if count(why & authentication_failures) > 0

status(false, why) := 403 if count(why & authentication_failures) == 0

# Headers passed to the upstream service.
upstream_headers["x-authz-subject"] := subject

upstream_headers["x-authz-tenant"] := claims.tenant

upstream_headers["x-authz-roles"] := concat(",", sort(claims.roles)) if not is_service

upstream_headers["x-authz-decision"] := "allow" if allow

upstream_headers["x-authz-decision"] := "deny" if not allow

# What the audit log records. Token details come from the unverified token,
# so that rejected tokens are logged too.
audit := object.union(audit_base, audit_token)

audit_base := {
	"method": request.method,
	"path": request.path,
	"allow": allow,
	"subject": subject,
	"reason_count": count(deny),
}

default audit_token := {}

audit_token := {
	"token": strings.redact(bearer, 12),
	"token_sha256": crypto.sha256(bearer),
	"alg": info.header.alg,
	"issuer": object.get(info.claims, "iss", "unknown"),
} if {
	info := token.unverified(bearer)
}

decision_json := json.marshal(decision)
