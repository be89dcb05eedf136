package checks.kubernetes_test

import data.checks.kubernetes.host_namespaces
import data.checks.kubernetes.non_root
import data.checks.kubernetes.privileged
import data.checks.kubernetes.resources
import data.lib.testing

app := {
	"name": "app",
	"image": "registry.internal.example.com/payments/api:1.4.2",
	"resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
	"securityContext": {"allowPrivilegeEscalation": false},
}

pod := {"securityContext": {"runAsNonRoot": true}, "containers": [app]}

test_hardened_deployment_passes if {
	inp := testing.deployment("api", pod)
	count(privileged.deny) + count(host_namespaces.deny) + count(resources.deny) + count(non_root.deny) == 0 with input as inp
}

test_privileged_init_container if {
	init := {"name": "sysctl", "image": "busybox:1.36", "securityContext": {"privileged": true}, "resources": app.resources}
	inp := testing.deployment("api", object.union(pod, {"initContainers": [init]}))
	findings := privileged.deny with input as inp
	[[f.msg, f.resource, f.provider, f.severity] | some f in findings] == [["Deployment/payments/api[sysctl] is privileged", "Deployment/payments/api", "kubernetes", "CRITICAL"]]
}

test_dangerous_capabilities if {
	c := object.union(app, {"securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "sys_admin"]}}})
	inp := testing.deployment("api", object.union(pod, {"containers": [c]}))
	[f.msg | some f in privileged.deny] == ["Deployment/payments/api[app] adds capability sys_admin"] with input as inp
}

test_host_namespaces_on_a_bare_pod if {
	inp := {"kind": "Pod", "metadata": {"name": "debug"}, "spec": object.union(pod, {"hostPID": true, "hostNetwork": true, "hostIPC": false})}
	{f.msg | some f in host_namespaces.deny} == {"Pod/debug sets hostPID", "Pod/debug sets hostNetwork"} with input as inp
}

test_cronjob_missing_limits if {
	worker := object.remove(app, ["resources"])
	inp := {
		"kind": "CronJob",
		"metadata": {"name": "nightly"},
		"spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": {"spec": object.union(pod, {"containers": [worker]})}}}},
	}
	[f.msg | some f in resources.deny] == ["CronJob/nightly[app] has no cpu or memory limit"] with input as inp
}

test_non_root_from_container_or_pod if {
	by_uid := object.union(app, {"name": "uid", "securityContext": {"runAsUser": 1000}})
	root := object.union(app, {"name": "root", "securityContext": {"runAsNonRoot": false}})
	inp := testing.deployment("api", {"containers": [app, by_uid, root]})
	{f.msg | some f in non_root.deny} == {
		"Deployment/payments/api[app] does not set runAsNonRoot",
		"Deployment/payments/api[root] does not set runAsNonRoot",
	} with input as inp
}

test_container_setting_overrides_pod if {
	root := object.union(app, {"securityContext": {"runAsNonRoot": false}})
	inp := testing.deployment("api", {"securityContext": {"runAsNonRoot": true}, "containers": [root]})
	count(non_root.deny) == 1 with input as inp
}

test_other_documents_are_ignored if {
	inp := {"kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "b"}}
	count(privileged.deny) + count(host_namespaces.deny) + count(resources.deny) + count(non_root.deny) == 0 with input as inp
}
