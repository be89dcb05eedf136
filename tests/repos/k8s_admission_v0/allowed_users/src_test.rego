package k8spspallowedusers

import data.lib.fixtures

non_root := {"runAsUser": {"rule": "MustRunAsNonRoot"}}

must_run_as := {"runAsUser": {"rule": "MustRunAs", "ranges": [{"min": 1000, "max": 1999}, {"min": 5000, "max": 5000}]}}

as_user(name, uid) = object.union(fixtures.container(name, "api:1"), {"securityContext": {"runAsUser": uid}})

pod_level(containers, sc) = fixtures.merge(fixtures.pod(containers), {"spec": {"securityContext": sc}})

msgs(obj, params) = result {
	result := {r.msg | r := violation[_]} with input as fixtures.review(obj, params)
}

test_non_root_user_passes {
	msgs(fixtures.pod([as_user("api", 1000)]), non_root) == set()
}

test_root_user_is_refused {
	msgs(fixtures.pod([as_user("api", 0)]), non_root) == {"Container api is attempting to run as root"}
}

test_unset_user_is_refused {
	msgs(fixtures.pod([fixtures.container("api", "api:1")]), non_root) == {"Container api must set runAsNonRoot or a non-zero runAsUser"}
}

test_run_as_non_root_flag_is_enough {
	c := object.union(fixtures.container("api", "api:1"), {"securityContext": {"runAsNonRoot": true}})
	msgs(fixtures.pod([c]), non_root) == set()
}

test_pod_security_context_is_inherited {
	msgs(pod_level([fixtures.container("api", "api:1")], {"runAsUser": 1500}), non_root) == set()
	msgs(pod_level([fixtures.container("api", "api:1")], {"runAsUser": 0}), non_root) == {"Container api is attempting to run as root"}
}

test_container_overrides_pod {
	msgs(pod_level([as_user("api", 0)], {"runAsUser": 1500}), non_root) == {"Container api is attempting to run as root"}
}

test_must_run_as_in_range {
	msgs(fixtures.pod([as_user("api", 1500), as_user("batch", 5000)]), must_run_as) == set()
}

test_must_run_as_out_of_range {
	msgs(fixtures.pod([as_user("api", 2000)]), must_run_as) == {"Container api is attempting to run as disallowed user 2000. Allowed runAsUser: 1000-1999, 5000-5000"}
}

test_must_run_as_requires_a_user {
	msgs(fixtures.pod([fixtures.container("api", "api:1")]), must_run_as) == {"Container api must set runAsUser"}
}

test_run_as_any_allows_root {
	msgs(fixtures.pod([as_user("api", 0)]), {"runAsUser": {"rule": "RunAsAny"}}) == set()
}

test_pod_level_run_as_non_root {
	msgs(pod_level([fixtures.container("api", "api:1")], {"runAsNonRoot": true}), non_root) == set()
	msgs(pod_level([fixtures.container("api", "api:1")], {"runAsNonRoot": false}), non_root) == {"Container api must set runAsNonRoot or a non-zero runAsUser"}
}
