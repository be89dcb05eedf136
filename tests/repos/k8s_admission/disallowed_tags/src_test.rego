package k8sdisallowedtags

import data.lib.test_fixtures as fx
import rego.v1

params := {"tags": ["latest", "Dev"]}

results_for(images) := {r.msg | some r in results} if {
	pod := fx.pod("app", [fx.container(sprintf("c%d", [i]), image) | some i, image in images])
	results := violation with input as fx.review(pod, params)
}

test_pinned_tags_pass if {
	results_for(["registry.example.com/app:1.2.3", "nginx:1.27-alpine"]) == set()
}

test_latest_is_refused if {
	results_for(["nginx:latest"]) == {`container <c0> uses a disallowed tag <nginx:latest>; disallowed tags are ["latest", "Dev"]`}
}

test_tags_compare_case_insensitively if {
	count(results_for(["registry.example.com/app:DEV"])) == 1
}

test_missing_tag_is_refused if {
	# No tag means "latest": both rules fire.
	results_for(["nginx"]) == {
		`container <c0> uses a disallowed tag <nginx>; disallowed tags are ["latest", "Dev"]`,
		"container <c0> didn't specify an image tag <nginx>",
	}
}

test_registry_port_is_not_a_tag if {
	count(results_for(["registry.example.com:5000/app"])) == 2
}

test_digests_pass if {
	results_for(["nginx@sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"]) == set()
}
