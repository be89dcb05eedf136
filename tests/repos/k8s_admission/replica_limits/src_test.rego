package k8sreplicalimits

import data.lib.test_fixtures as fx
import rego.v1

params := {"ranges": [{"min_replicas": 2, "max_replicas": 5}, {"min_replicas": 10, "max_replicas": 20}]}

deployment_violations(replicas) := results if {
	results := violation with input as fx.review(fx.deployment("web", replicas, []), params)
}

hpa(min, max) := {
	"apiVersion": "autoscaling/v2",
	"kind": "HorizontalPodAutoscaler",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {"minReplicas": min, "maxReplicas": max, "scaleTargetRef": {"kind": "Deployment", "name": "web"}},
}

test_replicas_inside_a_range if {
	every n in [2, 3, 5, 10, 20] {
		count(deployment_violations(n)) == 0
	}
}

test_replicas_between_ranges if {
	deployment_violations(7) == {{"msg": "The provided number of replicas is not allowed for web: 7. Allowed ranges: {min: 2, max: 5}, {min: 10, max: 20}"}}
}

test_single_replica_is_refused if {
	count(deployment_violations(1)) == 1
}

test_missing_replicas_defaults_to_one if {
	dep := json.remove(fx.deployment("web", 3, []), ["spec/replicas"])
	count(violation) == 1 with input as fx.review(dep, params)
}

test_autoscaler_bounds if {
	count(violation) == 0 with input as fx.review(hpa(2, 5), params)
	count(violation) == 1 with input as fx.review(hpa(2, 8), params)
	count(violation) == 1 with input as fx.review(json.remove(hpa(3, 4), ["spec/minReplicas"]), params)
}

test_pods_are_not_counted if {
	count(violation) == 0 with input as fx.review(fx.pod("web", []), params)
}
