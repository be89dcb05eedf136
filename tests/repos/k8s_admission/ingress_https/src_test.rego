package k8shttpsonly

import data.lib.test_fixtures as fx
import rego.v1

https_only := {"kubernetes.io/ingress.allow-http": "false"}

msgs(ing) := {r.msg | some r in results} if {
	results := violation with input as fx.review(ing, {})
}

inventory := {"namespace": {"blog": {"networking.k8s.io/v1": {"Ingress": {"www": fx.ingress("www", ["blog.example.com"], [], {})}}}}}

test_https_ingress_passes if {
	ing := fx.ingress("shop", ["shop.example.com"], ["shop.example.com"], https_only)
	msgs(ing) == set()
}

test_http_must_be_disabled if {
	ing := fx.ingress("shop", ["shop.example.com"], ["shop.example.com"], {})
	msgs(ing) == {"Ingress should be https. tls configuration and allow-http=false annotation are required"}
}

test_allow_http_true_is_refused if {
	ing := fx.ingress("shop", ["shop.example.com"], ["shop.example.com"], {"kubernetes.io/ingress.allow-http": "true"})
	count(msgs(ing)) == 1
}

test_hosts_need_certificates if {
	ing := fx.ingress("shop", ["shop.example.com", "api.example.com", "admin.example.org"], ["shop.example.com"], https_only)
	results := violation with input as fx.review(ing, {})
	results == {{
		"msg": "hosts without a TLS certificate: admin.example.org, api.example.com",
		"details": {"hosts": {"api.example.com", "admin.example.org"}},
	}}
}

test_wildcard_certificates if {
	ing := fx.ingress("shop", ["shop.example.com", "api.example.com"], ["*.example.com"], https_only)
	msgs(ing) == set()
}

test_other_kinds_are_ignored if {
	msgs(fx.pod("web", [])) == set()
}

test_duplicate_host_in_another_namespace if {
	ing := fx.ingress("blog", ["blog.example.com"], ["blog.example.com"], https_only)
	results := violation with input as fx.review(ing, {}) with data.inventory as inventory
	results == {{"msg": "ingress host conflicts with an existing ingress <blog/www>: blog.example.com"}}
}

test_updating_the_same_ingress_is_not_a_conflict if {
	ing := fx.in_namespace(fx.ingress("www", ["blog.example.com"], ["blog.example.com"], https_only), "blog")
	count(violation) == 0 with input as fx.review(ing, {}) with data.inventory as inventory
}
