package checks.aws.cloudtrail.trail_test

import data.checks.aws.cloudtrail.trail
import data.lib.testing

good := {
	"name": "org-trail",
	"is_multi_region_trail": true,
	"enable_log_file_validation": true,
	"kms_key_id": "arn:aws:kms:eu-west-1:123456789012:key/1234abcd",
	"s3_bucket_name": "acme-cloudtrail",
}

trail_input(values) := testing.plan([testing.resource("aws_cloudtrail", "main", values)])

test_good_trail_passes if {
	count(trail.deny) == 0 with input as trail_input(good)
}

test_every_rule_has_its_own_id_and_severity if {
	bad := {"name": "dev-trail", "is_multi_region_trail": false, "s3_bucket_name": "acme-dev-trail"}
	findings := trail.deny with input as trail_input(bad)
	{[f.id, f.severity] | some f in findings} == {["AWS-CT-001", "HIGH"], ["AWS-CT-002", "MEDIUM"], ["AWS-CT-003", "LOW"]}
}

test_titles_come_from_rule_annotations if {
	bad := object.remove(good, ["enable_log_file_validation"])
	findings := trail.deny with input as trail_input(bad)
	[f.title | some f in findings] == ["Log file validation disabled"]
	[f.msg | some f in findings] == ["Trail org-trail does not validate log files"]
}
