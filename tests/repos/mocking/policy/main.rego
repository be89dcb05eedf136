# Gateway decision for one request:
#
#   input = {
#     "user": {"id": "u-123", "role": "maintainer", "team": "payments"},
#     "request": {"method": "POST", "path": "/v1/ledger", "size_mb": 3, "region": "eu-west-1"},
#     "resource": {"owner_team": "payments"}
#   }
#
# Helpers (is_weekend, is_write, tier, ...) are in helpers.rego and the
# per-tier limits in limits.rego; all three files are package service.
package service

import data.lib.clock
import data.lib.directory

default allow := false

allow if {
	permitted
	count(deny) == 0
}

# Who may do what, before the deny rules.
permitted if is_admin

permitted if {
	is_read
	team_member
}

permitted if {
	is_write
	team_member
	input.user.role in writer_roles
}

writer_roles := {"maintainer", "owner"}

deny contains "service is in a maintenance window" if in_maintenance

deny contains "changes are frozen over the weekend" if {
	data.config.features.weekend_freeze
	is_write
	is_weekend(clock.now)
	not is_admin
}

deny contains msg if {
	input.request.size_mb > limits.request_mb
	msg := sprintf("request of %d MB exceeds the %s tier limit of %d MB", [input.request.size_mb, tier, limits.request_mb])
}

deny contains "account is suspended" if directory.profile(input.user.id).suspended == true

deny contains msg if {
	region := input.request.region
	not region in data.config.regions.enabled
	msg := sprintf("region %s is not enabled", [region])
}

decision := {
	"allow": allow,
	"reasons": sort(deny),
	"tier": tier,
	"limits": limits,
}
