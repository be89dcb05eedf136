package k8srequiredlabels

import data.lib.test_fixtures as fx
import rego.v1

params := {"labels": [
	{"key": "owner", "allowedRegex": `^[a-z]+(-[a-z]+)*$`},
	{"key": "cost-center"},
]}

labelled(labels) := fx.with_labels(fx.deployment("web", 2, []), labels)

test_all_labels_present if {
	inp := fx.review(labelled({"owner": "team-shop", "cost-center": "cc-42"}), params)
	count(violation) == 0 with input as inp
}

test_one_label_missing if {
	inp := fx.review(labelled({"owner": "team-shop"}), params)
	results := violation with input as inp
	results == {{
		"msg": `you must provide labels: {"cost-center"}`,
		"details": {"missing_labels": {"cost-center"}},
	}}
}

test_every_missing_label_is_listed if {
	inp := fx.review(labelled({"app": "web"}), params)
	results := violation with input as inp
	[r] := [r | some r in results]
	r.details.missing_labels == {"owner", "cost-center"}
	r.msg == `you must provide labels: {"cost-center", "owner"}`
}

test_custom_message if {
	custom := object.union(params, {"message": "labels %v are required by the platform team"})
	inp := fx.review(labelled({}), custom)
	some r in violation with input as inp
	startswith(r.msg, "labels {")
	endswith(r.msg, "} are required by the platform team")
}

test_label_must_match_regex if {
	inp := fx.review(labelled({"owner": "Team_Shop", "cost-center": "cc-1"}), params)
	results := violation with input as inp
	count(results) == 1
	some r in results
	r.msg == "label <owner: Team_Shop> does not satisfy allowed regex: ^[a-z]+(-[a-z]+)*$"
}

test_exempt_namespace_is_skipped if {
	obj := fx.in_namespace(labelled({}), "kube-system")
	count(violation) == 0 with input as fx.review(obj, params)
}

test_exemptions_can_be_mocked if {
	obj := fx.in_namespace(labelled({}), "kube-system")
	count(violation) == 1 with input as fx.review(obj, params)
		with data.exemptions as {"namespaces": [], "namespace_prefixes": []}
}
