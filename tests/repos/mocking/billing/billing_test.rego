package billing_test

import data.billing
import data.lib.quota

test_states_from_the_snapshot if {
	billing.blocked == {"globex"}
	billing.throttled == {"acme"}
}

# lib.quota.used_percent is called by lib.quota.status, which billing calls.
test_quota_function_mocked_by_value if {
	billing.blocked == {"acme", "globex", "initech"} with data.lib.quota.used_percent as 500
	billing.throttled == set() with data.lib.quota.used_percent as 500
}

low_usage(_) := 1

usage_table(name) := {"acme": 10, "globex": 50, "initech": 95}[name]

test_quota_function_mocked_through_import if {
	billing.blocked == set() with quota.used_percent as low_usage
	billing.throttled == {"initech"} with quota.used_percent as usage_table
}

test_status_function_mocked_directly if {
	billing.blocked == {"acme", "globex", "initech"} with quota.status as "blocked"
}

test_overage_charges if {
	billing.overage == {"globex": 30}
	billing.overage == {"globex": 120} with data.config.quota.overage_price_per_unit as 1
	billing.overage == {} with data.usage.accounts.globex.used as 500
}

test_admit_default_and_mocks if {
	billing.admit with input as {"account": "acme"}
	not billing.admit with input as {"account": "globex"}
	billing.admit == false with input as {"account": "globex"}
	billing.admit with input as {"account": "globex"} with quota.status as "ok"
	billing.admit with input as {"account": "globex"} with data.usage.accounts.globex.used as 0
}

test_warning_for_throttled_accounts if {
	billing.warning == "account acme has used 90% of its quota" with input.account as "acme"
	not billing.warning with input.account as "initech"
	billing.warning == "account initech has used 99% of its quota" with input.account as "initech"
		with quota.used_percent as 99
}
