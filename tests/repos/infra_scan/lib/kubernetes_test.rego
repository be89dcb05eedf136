package lib.kubernetes_test

import data.lib.kubernetes as k8s
import data.lib.testing

container := {"name": "web", "image": "nginx:1.25", "securityContext": {"readOnlyRootFilesystem": true}}

test_pod_spec_of_each_kind if {
	spec := {"containers": [container]}
	k8s.pod_spec == spec with input as {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
	k8s.pod_spec == spec with input as testing.deployment("d", spec)
	k8s.pod_spec == spec with input as {"kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": {"spec": {"template": {"spec": spec}}}}}
	not k8s.pod_spec with input as {"kind": "Service", "metadata": {"name": "s"}, "spec": spec}
}

test_names_with_and_without_namespace if {
	k8s.name == "Deployment/payments/d" with input as testing.deployment("d", {})
	k8s.name == "Pod/p" with input as {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
}

test_security_setting_falls_back_to_the_pod if {
	inp := testing.deployment("d", {"securityContext": {"runAsUser": 1000, "readOnlyRootFilesystem": false}, "containers": [container]})
	k8s.security_setting(container, "runAsUser") == 1000 with input as inp
	k8s.security_setting(container, "readOnlyRootFilesystem") == true with input as inp
	not k8s.security_setting(container, "runAsGroup") with input as inp
}

# Pitfall kept as a regression test: a function call nested in a negated
# comparison is evaluated before the negation, so when the call is
# undefined the whole expression is undefined rather than true.
negated_comparison(c) if not k8s.security_setting(c, "runAsNonRoot") == true

negated_helper(c) if not is_true(k8s.security_setting(c, "runAsNonRoot"))

is_true(x) if x == true

test_negated_function_call_comparison_is_undefined if {
	inp := testing.deployment("d", {"containers": [container]})
	not negated_comparison(container) with input as inp
	not negated_helper(container) with input as inp
}
