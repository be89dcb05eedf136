# Time helpers. Everything derives from `now`, so tests can pin the time by
# mocking either `data.lib.clock.now` or the `time.now_ns` builtin.
package lib.clock

import data.config.timezone_offset_hours as offset

now := time.now_ns()

hour_ns := (60 * 60) * 1000000000

# Local time of the gateway's operators.
local(ns) := ns + (offset * hour_ns)

weekday_of(ns) := time.weekday(local(ns))

hour_of(ns) := time.clock(local(ns))[0]

is_business_hours(ns) if {
	hours := data.config.business_hours
	hour_of(ns) >= hours.start
	hour_of(ns) < hours.end
	not weekday_of(ns) in {"Saturday", "Sunday"}
}

# Whether ns lies in [start, end), given as RFC 3339 timestamps.
between(ns, start, end) if {
	time.parse_rfc3339_ns(start) <= ns
	ns < time.parse_rfc3339_ns(end)
}
