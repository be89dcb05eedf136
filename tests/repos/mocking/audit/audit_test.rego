package audit_test

import data.audit
import data.lib.clock as c
import data.service

tuesday_noon := 1699959600000000000 # 2023-11-14T11:00:00Z, 12:00 local

saturday_morning := 1700298000000000000 # 2023-11-18T09:00:00Z

req := {
	"user": {"id": "u-100", "role": "maintainer", "team": "payments"},
	"request": {"method": "POST", "path": "/v1/ledger", "size_mb": 1, "region": "eu-west-1"},
	"resource": {"owner_team": "payments"},
}

test_record_at_a_pinned_time if {
	r := audit.record with input as req with c.now as tuesday_noon
	r == {
		"at": "2023-11-14T11:00:00Z",
		"user": "u-100",
		"action": "POST /v1/ledger",
		"allowed": true,
		"tier": "bronze",
		"reasons": [],
		"business_hours": true,
	}
}

test_record_with_mocked_service_rules if {
	r := audit.record with input as req with c.now as tuesday_noon
		with data.service.tier as "gold"
		with data.service.allow as false
	r.tier == "gold"
	r.allowed == false
	r.reasons == []
}

test_record_with_mocked_decision if {
	r := audit.record with input as req with time.now_ns as saturday_morning
		with data.service.decision as {"reasons": ["mocked"]}
	r.reasons == ["mocked"]
	r.at == "2023-11-18T09:00:00Z"
	r.business_hours == false
	r.allowed == false
}

test_admin_write_denied_alert if {
	alerts := audit.alerts with input as req with c.now as tuesday_noon
		with service.is_admin as true
		with service.allow as false
	alerts == {"admin write denied"}
}

test_write_outside_business_hours_alert if {
	audit.alerts == {"write outside business hours"} with input as req with c.now as tuesday_noon with service.allow as true with audit.in_business_hours as false
	audit.alerts == set() with input as req with c.now as tuesday_noon
}

test_large_request_alert_uses_the_tier if {
	big := object.union(req, {"request": {"size_mb": 45}})
	audit.alerts == {"large request from platinum tier"} with input as big with c.now as tuesday_noon with data.service.tier as "platinum"
	not "large request from platinum tier" in audit.alerts with input as req with data.service.tier as "platinum"
}

# The whole service package replaced by a plain document.
test_record_with_the_service_package_mocked if {
	stub := {"allow": true, "tier": "stub", "decision": {"reasons": []}}
	r := audit.record with input as req with c.now as tuesday_noon with data.service as stub
	r.allowed
	r.tier == "stub"
}
