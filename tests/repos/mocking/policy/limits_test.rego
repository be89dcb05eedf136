package service_test

import data.service

test_default_limits if {
	service.limits == {"cpu": 1, "memory_gb": 2, "request_mb": 5} with input as {}
}

test_limits_follow_a_mocked_tier if {
	service.limits == {"cpu": 2, "memory_gb": 4, "request_mb": 10} with data.service.tier as "silver"
	service.limits == {"cpu": 4, "memory_gb": 8, "request_mb": 50} with data.service.tier as "gold"
	service.limits.burst_cpu == 8 with data.service.tier as "platinum"
	not service.limits.burst_cpu with data.service.tier as "gold"
}

test_ref_head_rule_mocked_by_path if {
	service.limits.cpu == 16 with data.service.limits.cpu as 16
	service.limits == {"cpu": 16, "memory_gb": 2, "request_mb": 5} with data.service.limits.cpu as 16 with input as {}

	# burst_cpu is computed from the mocked cpu limit.
	service.limits.burst_cpu == 32 with data.service.limits.cpu as 16 with data.service.tier as "platinum"
}

test_whole_limits_object_mocked if {
	inp := with_size(request("GET", viewer), 900)
	d := decide_at(inp, tuesday_noon) with data.service.limits as {"cpu": 1, "request_mb": 1000}
	d.allow
	d.limits == {"cpu": 1, "request_mb": 1000}
}

test_limits_from_mocked_config if {
	service.limits.memory_gb == 3 with data.config.limits.bronze.memory_gb as 3 with input as {}
	service.limits.request_mb == 5 with data.config.limits.bronze.memory_gb as 3 with input as {}
}

test_default_cpu_survives_unrelated_mocks if {
	service.limits.cpu == 1 with data.service.tier as "diamond"
	not service.limits.memory_gb with data.service.tier as "diamond"
}
