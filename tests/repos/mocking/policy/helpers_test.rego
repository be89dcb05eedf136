# Tests inside package service itself: rules and functions of main.rego,
# helpers.rego and limits.rego are used, and mocked, by their short names.
package service

write_request := {
	"user": {"id": "u-100", "role": "maintainer", "team": "payments"},
	"request": {"method": "POST", "path": "/v1/ledger", "size_mb": 1, "region": "eu-west-1"},
	"resource": {"owner_team": "payments"},
}

test_is_weekend_uses_local_time if {
	is_weekend(1700263800000000000) # Friday 23:30 UTC is Saturday 00:30 local
	not is_weekend(1699959600000000000)
	not is_weekend(1700263800000000000) with data.config.timezone_offset_hours as 0
}

test_tier_defaults_to_bronze if {
	tier == "bronze" with input as {"user": {"id": "u-1"}}
}

test_tier_platinum_from_config if {
	tier == "platinum" with input.user.id as "u-vip"
	tier == "platinum" with input.user.id as "u-1" with data.config.tiers.platinum as ["u-1"]
}

test_tier_else_chain_with_mocked_plan if {
	tier == "gold" with plan as "enterprise"
	tier == "silver" with plan as "team"
	tier == "bronze" with plan as "free"
	tier == "platinum" with plan as "team" with input.user.id as "u-vip"
}

test_tier_with_mocked_profile_function if {
	tier == "gold" with input.user.id as "u-1" with data.lib.directory.profile as {"plan": "enterprise"}
}

test_short_name_mocks_of_rules_and_functions if {
	deny == {"changes are frozen over the weekend"} with input as write_request
		with is_weekend as true
		with in_maintenance as false
	allow with input as write_request with is_weekend as false with in_maintenance as false
}

test_permitted_from_short_name_rules if {
	permitted with is_admin as true with input as {}
	not permitted with team_member as false with input as write_request
	permitted with writer_roles as {"maintainer"} with input as write_request
	not permitted with writer_roles as {"owner"} with input as write_request
}

test_deny_mocked_as_a_whole if {
	allow with input as write_request with deny as set()
	not allow with input as write_request with deny as {"mocked"}
}
