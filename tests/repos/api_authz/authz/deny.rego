# Reasons to refuse a request. Any reason makes `allow` false; the reasons
# are returned to the caller in the decision.
package authz

import data.authz.roles
import data.authz.routes
import data.lib.time as clock
import rego.v1

deny contains "service is in maintenance mode" if data.config.maintenance

deny contains "missing bearer token" if {
	not public_route
	not bearer
}

deny contains "invalid or expired token" if {
	not public_route
	bearer
	not claims
}

deny contains msg if {
	not public_route
	claims
	count(required) == 0
	msg := sprintf("no route for %s %s", [request.method, request.path])
}

deny contains msg if {
	claims
	some perm in required
	not roles.grants(user_permissions, perm)
	msg := sprintf("%s lacks permission %q", [subject, perm])
}

# Tenant-scoped paths are limited to the token's tenant, except for admins.
deny contains msg if {
	claims
	requested := routes.tenant_of(request.path)
	requested != claims.tenant
	not "admin" in claims.roles
	msg := sprintf("tenant %q may not access tenant %q", [claims.tenant, requested])
}

deny contains msg if {
	some network in data.config.blocked_networks
	net.cidr_contains(network, request.source_ip)
	msg := sprintf("source %s is in blocked network %s", [request.source_ip, network])
}

deny contains "exports are only allowed during business hours" if {
	routes.business_hours_only(request.method, request.path)
	not clock.business_hours(request.time_ns)
}

# Clients announce their version; outdated ones must upgrade first.
deny contains msg if {
	version := trim_prefix(request.headers["x-client-version"], "v")
	semver.is_valid(version)
	semver.compare(version, data.config.min_client_version) < 0
	msg := sprintf("client version %s is older than %s", [version, data.config.min_client_version])
}

deny contains msg if {
	version := request.headers["x-client-version"]
	not semver.is_valid(trim_prefix(version, "v"))
	msg := sprintf("malformed client version %q", [version])
}

# Tokens older than max_age_days must be refreshed, whatever their expiry.
deny contains msg if {
	claims
	age := clock.age_days(claims.iat * clock.second, request.time_ns)
	age > data.config.jwt.max_age_days
	msg := sprintf("token issued %s days ago exceeds the %d day limit", [format_int(age, 10), data.config.jwt.max_age_days])
}
