package k8sblocknodeport

import data.lib.fixtures

with_node_port(p, n) = object.union(p, {"nodePort": n})

annotated(svc, annotations) = fixtures.merge(svc, {"metadata": {"annotations": annotations}})

test_cluster_ip_service_passes {
	count(violation) == 0 with input as fixtures.review(fixtures.service("ClusterIP", [fixtures.port(80)]), {})
}

test_node_port_service_is_refused {
	results := violation with input as fixtures.review(fixtures.service("NodePort", [fixtures.port(80)]), {})
	results == {{"msg": "Service web/api: services of type NodePort are not allowed"}}
}

test_explicit_node_port_is_reported {
	svc := fixtures.service("NodePort", [with_node_port(fixtures.port(80), 30080), fixtures.port(443)])
	results := violation with input as fixtures.review(svc, {})
	count(results) == 2
	results[{"msg": "Service web/api: port port-80 requests node port 30080", "details": {"port": "port-80", "nodePort": 30080}}]
}

test_external_load_balancer_is_refused {
	results := violation with input as fixtures.review(fixtures.service("LoadBalancer", [fixtures.port(443)]), {})
	results == {{"msg": "Service web/api: load balancers must be internal"}}
}

test_internal_load_balancers_pass {
	gke := annotated(fixtures.service("LoadBalancer", [fixtures.port(443)]), {"networking.gke.io/load-balancer-type": "Internal"})
	aws := annotated(fixtures.service("LoadBalancer", [fixtures.port(443)]), {"service.beta.kubernetes.io/aws-load-balancer-internal": "true"})
	count(violation) == 0 with input as fixtures.review(gke, {})
	count(violation) == 0 with input as fixtures.review(aws, {})
}

test_wrong_annotation_value_is_not_internal {
	svc := annotated(fixtures.service("LoadBalancer", [fixtures.port(443)]), {"service.beta.kubernetes.io/aws-load-balancer-internal": "false"})
	count(violation) == 1 with input as fixtures.review(svc, {})
}

test_external_load_balancers_can_be_allowed {
	svc := fixtures.service("LoadBalancer", [fixtures.port(443)])
	count(violation) == 0 with input as fixtures.review(svc, {"allowExternalLoadBalancers": true})
}

test_pods_are_ignored {
	count(violation) == 0 with input as fixtures.review(fixtures.pod([]), {})
}
