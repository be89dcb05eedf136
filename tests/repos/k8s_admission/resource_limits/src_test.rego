package k8scontainerlimits

import data.lib.test_fixtures as fx
import rego.v1

params := {"cpu": "2", "memory": "1Gi"}

limited(name, cpu, memory) := fx.with_limits(fx.container(name, "registry.example.com/app:1"), {"cpu": cpu, "memory": memory})

check(containers) := {r.msg | some r in results} if {
	results := violation with input as fx.review(fx.deployment("app", 1, containers), params)
}

test_limits_within_bounds if {
	check([limited("app", "500m", "256Mi"), limited("sidecar", 2, "1Gi")]) == set()
}

test_missing_limits if {
	check([fx.container("app", "registry.example.com/app:1")]) == {
		"container <app> has no cpu limit",
		"container <app> has no memory limit",
	}
}

test_missing_memory_limit_only if {
	c := fx.with_limits(fx.container("app", "registry.example.com/app:1"), {"cpu": "1"})
	check([c]) == {"container <app> has no memory limit"}
}

test_memory_above_maximum if {
	check([limited("app", "1", "1536Mi")]) == {"container <app> memory limit <1536Mi> is higher than the maximum allowed of <1Gi>"}
}

test_memory_in_plain_bytes if {
	check([limited("app", "1", 1073741824)]) == set()
	check([limited("app", "1", 1073741825)]) == {"container <app> memory limit <1073741825> is higher than the maximum allowed of <1Gi>"}
}

test_cpu_above_maximum if {
	results := violation with input as fx.review(fx.pod("p", [limited("app", "2500m", "1Gi")]), params)
	results == {{
		"msg": "container <app> cpu limit <2500m> is higher than the maximum allowed of <2>",
		"details": {"limit": "2500m", "max": "2"},
	}}
}

test_init_containers_need_limits_too if {
	pod := fx.pod_with_init("p", [fx.container("init", "registry.example.com/init:1")], [limited("app", "1", "1Gi")])
	count(violation) == 2 with input as fx.review(pod, params)
}
