package k8sallowedrepos

import data.lib.test_fixtures as fx
import rego.v1

params := {"repos": ["registry.example.com/", "ghcr.io/example/"]}

violations_for(obj) := results if {
	results := violation with input as fx.review(obj, params)
}

messages(obj) := {r.msg | some r in violations_for(obj)}

test_allowed_image if {
	pod := fx.pod("web", [fx.container("app", "registry.example.com/shop/web:1.4.2")])
	count(violations_for(pod)) == 0
}

test_image_from_docker_hub_is_refused if {
	pod := fx.pod("web", [fx.container("app", "nginx:1.25")])
	results := violations_for(pod)
	results == {{
		"msg": `container <app> has an invalid image repo <nginx:1.25>, allowed repos are ["registry.example.com/", "ghcr.io/example/"]`,
		"details": {"container": "app", "image": "nginx:1.25"},
	}}
}

test_init_containers_are_checked if {
	pod := fx.pod_with_init("web", [fx.container("migrate", "docker.io/flyway/flyway:10")], [fx.container("app", "ghcr.io/example/web:2")])
	results := violations_for(pod)
	count(results) == 1
	some r in results
	startswith(r.msg, "initContainer <migrate>")
}

test_each_bad_container_is_reported if {
	dep := fx.deployment("web", 2, [
		fx.container("app", "quay.io/acme/web:1"),
		fx.container("proxy", "envoyproxy/envoy:v1.30"),
		fx.container("metrics", "registry.example.com/exporter:0.9"),
	])
	{r.details.container | some r in violations_for(dep)} == {"app", "proxy"}
}

test_prefix_must_match_exactly if {
	# "ghcr.io/example-evil/" does not start with "ghcr.io/example/".
	pod := fx.pod("web", [fx.container("app", "ghcr.io/example-evil/web:1")])
	count(violations_for(pod)) == 1
}

test_cronjob_containers_are_checked if {
	job := fx.cronjob("cleanup", [fx.container("job", "alpine:3.20")])
	count(violations_for(job)) == 1
}

test_cluster_image_exemptions_apply if {
	pod := fx.pod("web", [fx.container("pause", "registry.k8s.io/pause:3.9")])
	count(violations_for(pod)) == 0
}

test_messages_helper if {
	pod := fx.pod("web", [fx.container("a", "nginx"), fx.container("b", "redis")])
	messages(pod) == {
		`container <a> has an invalid image repo <nginx>, allowed repos are ["registry.example.com/", "ghcr.io/example/"]`,
		`container <b> has an invalid image repo <redis>, allowed repos are ["registry.example.com/", "ghcr.io/example/"]`,
	}
}
