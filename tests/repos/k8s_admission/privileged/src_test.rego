package k8spspprivileged

import data.lib.test_fixtures as fx
import rego.v1

privileged_container(name) := fx.with_security_context(fx.container(name, "busybox"), {"privileged": true})

locked_container(name) := fx.with_security_context(fx.container(name, "busybox"), {
	"privileged": false,
	"allowPrivilegeEscalation": false,
})

test_privileged_container_is_refused if {
	results := violation with input as fx.review(fx.pod("debug", [privileged_container("shell")]), {})
	results == {{
		"msg": `Privileged container is not allowed: shell, securityContext: {"privileged": true}`,
		"details": {},
	}}
}

test_unprivileged_container_passes if {
	count(violation) == 0 with input as fx.review(fx.pod("app", [fx.container("app", "busybox")]), {})
}

test_privileged_init_container_is_refused if {
	pod := fx.pod_with_init("app", [privileged_container("sysctl")], [locked_container("app")])
	count(violation) == 1 with input as fx.review(pod, {})
}

test_exempt_images_may_be_privileged if {
	agent := fx.with_security_context(fx.container("agent", "registry.example.com/node-agent:2.3"), {"privileged": true})
	params := {"exemptImages": ["registry.example.com/node-agent:*"]}
	count(violation) == 0 with input as fx.review(fx.pod("agent", [agent]), params)
}

test_escalation_is_checked_when_asked if {
	pod := fx.pod("app", [fx.container("app", "busybox"), locked_container("sidecar")])
	results := violation with input as fx.review(pod, {"checkEscalation": true})
	results == {{"msg": "Privilege escalation container is not allowed: app", "details": {"container": "app"}}}
}

test_escalation_is_not_checked_by_default if {
	pod := fx.pod("app", [fx.container("app", "busybox")])
	not "Privilege escalation container is not allowed: app" in {r.msg | some r in violation} with input as fx.review(pod, {})
	count(violation) == 0 with input as fx.review(pod, {})
}

test_privileged_and_escalating_container_has_two_violations if {
	pod := fx.deployment("app", 1, [privileged_container("app")])
	count(violation) == 2 with input as fx.review(pod, {"checkEscalation": true})
}
