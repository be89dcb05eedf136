package k8spspcapabilities

import data.lib.test_fixtures as fx
import rego.v1

params := {"allowedCapabilities": ["NET_BIND_SERVICE", "chown"], "requiredDropCapabilities": ["NET_RAW", "SYS_ADMIN"]}

with_caps(add, drop) := fx.with_security_context(fx.container("app", "registry.example.com/app:1"), {"capabilities": {"add": add, "drop": drop}})

review_of(c) := fx.review(fx.pod("app", [c]), params)

test_allowed_additions_and_required_drops if {
	count(violation) == 0 with input as review_of(with_caps(["NET_BIND_SERVICE", "CHOWN"], ["NET_RAW", "SYS_ADMIN"]))
}

test_dropping_all_covers_every_requirement if {
	count(violation) == 0 with input as review_of(with_caps([], ["all"]))
}

test_disallowed_addition if {
	results := violation with input as review_of(with_caps(["SYS_ADMIN", "NET_BIND_SERVICE"], ["ALL"]))
	results == {{
		"msg": `container <app> has a disallowed capability. Allowed capabilities are ["CHOWN", "NET_BIND_SERVICE"]`,
		"details": {"disallowed": {"SYS_ADMIN"}},
	}}
}

test_cap_prefix_and_case_are_ignored if {
	count(violation) == 0 with input as review_of(with_caps(["cap_net_bind_service"], ["CAP_NET_RAW", "sys_admin"]))
}

test_missing_required_drops if {
	results := violation with input as review_of(with_caps([], ["NET_RAW"]))
	some r in results
	r.details.missing == {"SYS_ADMIN"}
	r.msg == `container <app> is not dropping all required capabilities. Container must drop all of ["NET_RAW", "SYS_ADMIN"]`
}

test_no_security_context_at_all if {
	results := violation with input as review_of(fx.container("app", "registry.example.com/app:1"))
	count(results) == 1
}

test_wildcard_allows_any_addition if {
	inp := fx.review(fx.pod("app", [with_caps(["SYS_TIME"], ["ALL"])]), {"allowedCapabilities": ["*"]})
	count(violation) == 0 with input as inp
}
