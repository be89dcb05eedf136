# Time helpers. Every function takes nanoseconds since the epoch, so that
# policies can be evaluated against the request time instead of the clock.
package lib.time

import rego.v1

second := 1000000000

day := 86400 * second

parse(ts) := time.parse_rfc3339_ns(ts)

weekend(ns) if time.weekday(ns) in {"Saturday", "Sunday"}

# Office hours: 08:00 to 18:00 UTC, Monday to Friday.
business_hours(ns) if {
	not weekend(ns)
	[hour, _, _] := time.clock([ns, "UTC"])
	hour >= 8
	hour < 18
}

# Days (possibly fractional) from `from_ns` to `to_ns`.
age_days(from_ns, to_ns) := (to_ns - from_ns) / day

# Does `deadline_ns` fall within `days` days after `now_ns`?
within_days(deadline_ns, now_ns, days) if {
	deadline_ns >= now_ns
	deadline_ns < time.add_date(now_ns, 0, 0, days)
}

# "2025-03-12" for a timestamp.
date_string(ns) := sprintf("%d-%02d-%02d", time.date(ns))
