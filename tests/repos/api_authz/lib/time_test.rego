package lib.time_test

import data.lib.time as t
import rego.v1

wednesday_morning := t.parse("2025-03-12T10:30:00Z")

test_parse if {
	wednesday_morning == 1741775400000000000
}

test_business_hours if {
	t.business_hours(wednesday_morning)
	not t.business_hours(t.parse("2025-03-12T07:59:59Z"))
	not t.business_hours(t.parse("2025-03-12T18:00:00Z"))
	not t.business_hours(t.parse("2025-03-16T12:00:00Z"))
}

test_business_hours_are_in_utc if {
	# 09:30 in New York is 14:30 UTC.
	t.business_hours(t.parse("2025-03-12T09:30:00-05:00"))
	not t.business_hours(t.parse("2025-03-12T16:30:00-05:00"))
}

test_weekend if {
	t.weekend(t.parse("2025-03-15T00:00:00Z"))
	not t.weekend(t.parse("2025-03-14T23:59:59Z"))
}

test_age_days if {
	t.age_days(t.parse("2025-03-01T00:00:00Z"), wednesday_morning) > 11
	t.age_days(t.parse("2025-03-01T00:00:00Z"), t.parse("2025-03-11T00:00:00Z")) == 10
}

test_within_days if {
	t.within_days(t.parse("2025-03-20T00:00:00Z"), wednesday_morning, 30)
	not t.within_days(t.parse("2025-05-20T00:00:00Z"), wednesday_morning, 30)
	not t.within_days(t.parse("2025-03-01T00:00:00Z"), wednesday_morning, 30)
}

test_date_string if {
	t.date_string(wednesday_morning) == "2025-03-12"
}
