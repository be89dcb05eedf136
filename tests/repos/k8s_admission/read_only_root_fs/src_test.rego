package k8spspreadonlyrootfilesystem

import data.lib.test_fixtures as fx
import rego.v1

read_only(c) := fx.with_security_context(c, {"readOnlyRootFilesystem": true})

app := fx.container("app", "registry.example.com/app:1")

test_read_only_container_passes if {
	count(violation) == 0 with input as fx.review(fx.pod("app", [read_only(app)]), {})
}

test_writable_container_is_refused if {
	results := violation with input as fx.review(fx.pod("app", [app]), {})
	results == {{
		"msg": "only read-only root filesystem container is allowed: app",
		"details": {"container": "app", "kind": "container"},
	}}
}

test_explicitly_writable_container_is_refused if {
	c := fx.with_security_context(app, {"readOnlyRootFilesystem": false})
	count(violation) == 1 with input as fx.review(fx.pod("app", [c]), {})
}

test_ephemeral_containers_are_skipped if {
	pod := json.patch(fx.pod("app", [read_only(app)]), [{"op": "add", "path": "/spec/ephemeralContainers", "value": [fx.container("debug", "busybox")]}])
	count(violation) == 0 with input as fx.review(pod, {})
}

test_exempt_image if {
	params := {"exemptImages": ["registry.example.com/app:1"]}
	count(violation) == 0 with input as fx.review(fx.pod("app", [app]), params)
}

test_statefulset_template_is_checked if {
	sts := json.patch(fx.deployment("db", 3, [app, read_only(fx.container("backup", "registry.example.com/backup:2"))]), [{"op": "replace", "path": "/kind", "value": "StatefulSet"}])
	[r.details.container | some r in violation] == ["app"] with input as fx.review(sts, {})
}
