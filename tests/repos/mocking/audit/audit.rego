# The audit record written for every gateway decision, and the alerts sent
# to the security channel.
package audit

import data.lib.clock
import data.service

default in_business_hours := false

in_business_hours if clock.is_business_hours(clock.now)

record := {
	"at": time.format(clock.now),
	"user": input.user.id,
	"action": sprintf("%s %s", [input.request.method, input.request.path]),
	"allowed": service.allow,
	"tier": service.tier,
	"reasons": service.decision.reasons,
	"business_hours": in_business_hours,
}

alerts contains "admin write denied" if {
	service.is_admin
	service.is_write
	not service.allow
}

alerts contains "write outside business hours" if {
	service.is_write
	service.allow
	not in_business_hours
}

alerts contains sprintf("large request from %s tier", [service.tier]) if input.request.size_mb > 40
