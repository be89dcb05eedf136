package lib.clock_test

import data.lib.clock

tuesday_noon := 1699959600000000000 # 2023-11-14T11:00:00Z

friday_late := 1700263800000000000 # 2023-11-17T23:30:00Z

test_now_from_a_mocked_builtin if {
	clock.now == 1700000000000000000 with time.now_ns as 1700000000000000000
}

test_weekday_in_local_time if {
	clock.weekday_of(friday_late) == "Saturday"
	clock.weekday_of(friday_late) == "Friday" with data.config.timezone_offset_hours as 0
	clock.weekday_of(friday_late) == "Friday" with clock.local as friday_late
}

test_business_hours if {
	clock.is_business_hours(tuesday_noon)
	not clock.is_business_hours(friday_late)
	not clock.is_business_hours(tuesday_noon) with data.config.business_hours as {"start": 14, "end": 22}
}

always_sunday(_) := "Sunday"

test_builtins_mocked_by_function_and_value if {
	not clock.is_business_hours(tuesday_noon) with time.weekday as always_sunday
	clock.hour_of(tuesday_noon) == 12
	clock.hour_of(tuesday_noon) == 3 with time.clock as [3, 0, 0]
}

test_between if {
	clock.between(tuesday_noon, "2023-11-14T00:00:00Z", "2023-11-15T00:00:00Z")
	not clock.between(tuesday_noon, "2023-11-14T11:00:01Z", "2023-11-15T00:00:00Z")
	not clock.between(tuesday_noon, "2023-11-14T00:00:00Z", "2023-11-14T11:00:00Z")
}
