# Helpers of package service, used by main.rego and limits.rego.
package service

import data.lib.clock
import data.lib.directory

is_weekend(ns) if clock.weekday_of(ns) in {"Saturday", "Sunday"}

is_read if input.request.method in {"GET", "HEAD", "OPTIONS"}

is_write if input.request.method in {"POST", "PUT", "PATCH", "DELETE"}

is_admin if input.user.role == "admin"

is_admin if input.user.id in data.config.admins

team_member if input.user.team == input.resource.owner_team

in_maintenance if {
	window := data.config.maintenance
	clock.between(clock.now, window.start, window.end)
}

# The customer tier: a platinum list in the config, else the directory plan.
default tier := "bronze"

tier := "platinum" if {
	input.user.id in data.config.tiers.platinum
} else := "gold" if {
	plan == "enterprise"
} else := "silver" if {
	plan == "team"
}

plan := directory.profile(input.user.id).plan
