package service_test

import data.lib.clock
import data.lib.directory
import data.service

test_maintainer_can_write_on_a_weekday if {
	d := decide_at(request("POST", maintainer), tuesday_noon)
	d.allow
	d.reasons == []
	d.tier == "gold"
}

test_weekend_freeze_blocks_writes if {
	d := decide_on_weekend(request("POST", maintainer))
	not d.allow
	d.reasons == ["changes are frozen over the weekend"]
}

test_freeze_uses_the_operators_time_zone if {
	not decide_at(request("PUT", maintainer), friday_late).allow
	decide_at(request("PUT", maintainer), friday_late).allow with data.config.timezone_offset_hours as 0
}

# The outer `with` reaches through decide_on_weekend, decide_at and decide.
test_weekend_freeze_can_be_switched_off if {
	d := decide_on_weekend(request("POST", maintainer)) with data.config.features.weekend_freeze as false
	d.allow
}

test_reads_are_not_frozen if {
	decide_on_weekend(request("GET", viewer)).allow
}

test_admins_bypass_the_freeze if {
	d := decide_on_weekend(request("DELETE", admin))
	d.allow
	d.tier == "bronze"
}

test_is_weekend_mocked_by_value if {
	not service.allow with input as request("POST", maintainer)
		with service.is_weekend as true
		with time.now_ns as tuesday_noon
}

test_is_weekend_mocked_by_function if {
	service.allow with input as request("POST", maintainer)
		with service.is_weekend as never
		with time.now_ns as saturday_morning
}

test_outsider_cannot_write_and_is_suspended if {
	d := decide_at(request("POST", outsider), tuesday_noon)
	not d.allow
	d.reasons == ["account is suspended"]
}

test_suspension_through_mocked_directory_function if {
	reasons := service.deny with input as request("GET", viewer)
		with directory.profile as {"plan": "team", "suspended": true}
		with time.now_ns as tuesday_noon
	reasons == {"account is suspended"}
}

test_maintenance_window if {
	d := decide_at(request("GET", viewer), during_maintenance)
	d.reasons == ["service is in a maintenance window"]
	not d.allow
}

test_maintenance_window_from_config if {
	window := {"start": "2023-11-14T10:00:00Z", "end": "2023-11-14T12:00:00Z"}
	"service is in a maintenance window" in service.deny with input as request("GET", viewer)
		with data.config.maintenance as window
		with time.now_ns as tuesday_noon
}

test_request_size_limit_follows_the_tier if {
	# The viewer is on the team plan: silver, 10 MB.
	d := decide_at(with_size(request("GET", viewer), 12), tuesday_noon)
	d.reasons == ["request of 12 MB exceeds the silver tier limit of 10 MB"]
	decide_at(with_size(request("GET", maintainer), 12), tuesday_noon).allow
}

# decide() sets the whole input itself, so an outer `with input...` is
# replaced by the inner `with input as inp`.
test_inner_input_replaces_outer_input_mock if {
	d := decide_at(request("GET", viewer), tuesday_noon) with input.request.size_mb as 500
	d.allow
}

test_region_must_be_enabled if {
	reasons := service.deny with input as request("GET", viewer)
		with input.request.region as "us-east-2"
		with time.now_ns as tuesday_noon
	reasons == {"region us-east-2 is not enabled"}
}

test_regions_mocked_in_data if {
	count(service.deny) == 0 with input as request("GET", viewer)
		with input.request.region as "us-east-2"
		with data.config.regions.enabled as ["us-east-2"]
		with time.now_ns as tuesday_noon
}

test_role_mocked_in_input if {
	not service.allow with input as request("POST", viewer) with time.now_ns as tuesday_noon
	service.allow with input as request("POST", viewer) with input.user.role as "owner" with time.now_ns as tuesday_noon
}

# Modifiers apply in order: a later `with input as` replaces an earlier
# `with input.user.role`.
test_later_input_modifier_wins if {
	not service.is_admin with input.user.role as "admin" with input as request("GET", viewer)
	service.is_admin with input as request("GET", viewer) with input.user.role as "admin"
}

test_not_with_modifiers if {
	not service.allow with input as request("DELETE", outsider) with time.now_ns as tuesday_noon
	not service.in_maintenance with clock.now as tuesday_noon
}

test_every_team_member_can_read_on_saturday if {
	every user in [maintainer, viewer, vip] {
		service.allow with input as request("GET", user)
	} with clock.now as saturday_morning
}

test_every_writer_is_frozen_on_saturday if {
	every user in [maintainer, vip] {
		not service.allow with input as request("PATCH", user)
	} with data.lib.clock.now as saturday_morning
}

test_clock_now_mocked_through_import if {
	service.in_maintenance with clock.now as during_maintenance
	service.is_weekend(clock.now) with clock.now as friday_late
}

test_decision_document if {
	d := decide_at(request("GET", vip), tuesday_noon)
	d == {
		"allow": true,
		"reasons": [],
		"tier": "platinum",
		"limits": {"cpu": 4, "burst_cpu": 8, "memory_gb": 16, "request_mb": 100},
	}
}

test_allow_defaults_to_false if {
	service.allow == false with input as {} with time.now_ns as tuesday_noon
	service.decision.reasons == [] with input as {} with time.now_ns as tuesday_noon
}
