package lib.quota_test

import data.lib.quota

test_used_percent_from_snapshot if {
	quota.used_percent("acme") == 90
	quota.used_percent("globex") == 124
	not quota.used_percent("nobody")
}

test_status_else_chain if {
	quota.status("acme") == "throttled"
	quota.status("globex") == "blocked"
	quota.status("initech") == "ok"
	quota.status("nobody") == "ok"
}

test_status_with_mocked_usage if {
	quota.status("acme") == "ok" with data.usage.accounts.acme as {"used": 100, "limit": 500}
	quota.status("initech") == "blocked" with data.usage.accounts as {"initech": {"used": 1000, "limit": 100}}
}

test_status_with_mocked_thresholds if {
	quota.status("acme") == "blocked" with data.config.quota as {"throttle_at": 50, "hard_limit": 80}
	quota.status("globex") == "throttled" with data.config.quota.hard_limit as 200
}

test_status_with_mocked_percentage if {
	quota.status("initech") == "blocked" with quota.used_percent as 121
}

test_remaining if {
	quota.remaining("acme") == 50
	quota.remaining("globex") == 0
}
