package k8srequiredprobes

import data.lib.fixtures

params = {"probes": ["livenessProbe", "readinessProbe"], "probeTypes": ["httpGet", "tcpSocket", "exec", "grpc"]}

probed(name, liveness, readiness) = object.union(fixtures.container(name, "registry.example.com/api:1"), {
	"livenessProbe": liveness,
	"readinessProbe": readiness,
})

review(containers) = fixtures.review(fixtures.pod(containers), params)

test_container_with_both_probes {
	c := probed("api", fixtures.http_probe("/healthz", 8080), fixtures.tcp_probe(8080))
	count(violation) == 0 with input as review([c])
}

test_container_without_probes {
	results := violation with input as review([fixtures.container("api", "api:1")])
	results == {
		{"msg": "Container <api> of Pod web/api has no <livenessProbe>"},
		{"msg": "Container <api> of Pod web/api has no <readinessProbe>"},
	}
}

test_probe_without_handler {
	c := probed("api", {"periodSeconds": 5}, fixtures.tcp_probe(8080))
	results := violation with input as review([c])
	results == {{"msg": `Container <api> of Pod web/api has a <livenessProbe> without a handler; expected one of ["exec", "grpc", "httpGet", "tcpSocket"]`}}
}

test_only_listed_probes_are_required {
	c := object.union(fixtures.container("api", "api:1"), {"readinessProbe": fixtures.tcp_probe(80)})
	p := {"probes": ["readinessProbe"], "probeTypes": ["tcpSocket"]}
	count(violation) == 0 with input as fixtures.review(fixtures.pod([c]), p)
}

test_init_containers_need_no_probes {
	c := probed("api", fixtures.http_probe("/healthz", 8080), fixtures.http_probe("/ready", 8080))
	pod := json.patch(fixtures.pod([c]), [{"op": "add", "path": "/spec/initContainers", "value": [fixtures.container("migrate", "api:1")]}])
	count(violation) == 0 with input as fixtures.review(pod, params)
}

test_deployment_containers_are_checked {
	results := violation with input as fixtures.review(fixtures.deployment([fixtures.container("api", "api:1")]), params)
	count(results) == 2
	r := results[_]
	startswith(r.msg, "Container <api> of Deployment web/api")
}

test_every_container_is_checked {
	good := probed("api", fixtures.tcp_probe(1), fixtures.tcp_probe(1))
	bad := fixtures.container("sidecar", "envoy:1")
	msgs := {r.msg | r := violation[_]} with input as review([good, bad])
	msgs == {
		"Container <sidecar> of Pod web/api has no <livenessProbe>",
		"Container <sidecar> of Pod web/api has no <readinessProbe>",
	}
}

test_plain_manifests_have_no_parameters {
	# Without a review there are no parameters, hence nothing to require.
	count(violation) == 0 with input as fixtures.pod([fixtures.container("api", "api:1")])
}
