package lib.k8s_test

import data.lib.k8s
import data.lib.test_fixtures as fx
import rego.v1

test_pod_spec_of_each_kind if {
	c := [fx.container("app", "nginx")]
	k8s.pod_spec(fx.pod("p", c)).containers == c
	k8s.pod_spec(fx.deployment("d", 2, c)).containers == c
	k8s.pod_spec(fx.cronjob("j", c)).containers == c
	not k8s.pod_spec({"kind": "ConfigMap", "data": {}})
}

test_review_accessors if {
	inp := fx.review(fx.deployment("web", 3, []), {"x": 1})
	k8s.kind == "Deployment" with input as inp
	k8s.name == "web" with input as inp
	k8s.namespace == "shop" with input as inp
	k8s.parameters == {"x": 1} with input as inp
}

test_parameters_default_to_empty if {
	k8s.parameters == {} with input as {"review": {"object": {}}}
}

test_exempt_namespaces if {
	k8s.exempt_namespace("kube-system")
	k8s.exempt_namespace("istio-ingress")
	not k8s.exempt_namespace("shop")
	k8s.exempt with input as fx.review(fx.in_namespace(fx.pod("p", []), "openshift-monitoring"), {})
}

test_describe if {
	k8s.describe(fx.deployment("web", 1, [])) == "Deployment shop/web"
	k8s.describe({"kind": "Namespace", "metadata": {"name": "shop"}}) == "Namespace default/shop"
}

test_tls_wildcards_cover_one_level if {
	k8s.tls_covers("*.example.com", "shop.example.com")
	not k8s.tls_covers("*.example.com", "a.shop.example.com")
	k8s.tls_covers("example.com", "example.com")
}

test_cached_ingresses if {
	inventory := {"namespace": {
		"shop": {"networking.k8s.io/v1": {"Ingress": {"web": {"spec": {}}}}},
		"blog": {"networking.k8s.io/v1": {"Ingress": {"www": {"spec": {}}}, "Service": {"www": {}}}},
	}}
	found := k8s.cached_ingresses with data.inventory as inventory
	found == {["shop", "web", {"spec": {}}], ["blog", "www", {"spec": {}}]}
}
