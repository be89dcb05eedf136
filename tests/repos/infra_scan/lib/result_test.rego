package lib.result_test

import data.lib.result

chain := [
	{"path": ["checks", "x", "deny"], "annotations": {"scope": "rule", "title": "Rule title", "custom": {"severity": "critical"}}},
	{"path": ["checks", "x", "deny"]},
	{"path": ["checks", "x"], "annotations": {"scope": "package", "title": "Package title", "custom": {"id": "X-1", "severity": "low"}}},
	{"path": ["checks"], "annotations": {"scope": "subpackages", "custom": {"provider": "acme"}}},
]

test_custom_fields_nearest_wins if {
	result.custom(chain) == {"id": "X-1", "severity": "critical", "provider": "acme"}
}

test_new_builds_finding if {
	f := result.new("boom", {"address": "aws_s3_bucket.a", "type": "aws_s3_bucket"}, chain)
	f == {"id": "X-1", "title": "Rule title", "msg": "boom", "severity": "CRITICAL", "resource": "aws_s3_bucket.a", "provider": "acme"}
}

test_title_falls_back if {
	result.title(array.slice(chain, 1, 4)) == "Package title"
	result.title([{"path": ["p"]}]) == "untitled check"
}

test_addresses if {
	result.address("provider.aws") == "provider.aws"
	result.address({"address": "aws_instance.web"}) == "aws_instance.web"
	result.address(["not", "a", "resource"]) == "<unknown>"
	result.address({"address": 42}) == "<unknown>"
}

test_rank if {
	result.rank("CRITICAL") == 4
	result.rank("low") == 1
	result.rank("informational") == 0
	result.rank("HIGH") > result.rank("MEDIUM")
}

test_from_rule_without_provider if {
	f := result.from_rule("m", "Dockerfile:3", {"title": "T", "custom": {"id": "D-1", "severity": "medium"}})
	f.provider == "generic"
	f.severity == "MEDIUM"
	f.resource == "Dockerfile:3"
}

# The annotations of this very rule, as rego.metadata.rule() sees them.
#
# METADATA
# title: Metadata of a test rule
# custom:
#   id: TEST-1
#   severity: info
test_rule_metadata_of_a_test if {
	f := result.from_rule("m", "r", rego.metadata.rule())
	f.id == "TEST-1"
	f.title == "Metadata of a test rule"
	f.severity == "INFO"
}

# Regression test for the pitfall described at result.address: a reference
# used as a call argument inside `not` is evaluated before the negation.
naive_unknown(resource) if not is_string(resource.address)

test_negated_call_on_missing_reference_is_undefined if {
	not naive_unknown(["a"])
	not naive_unknown({})
	naive_unknown({"address": 1})
}
