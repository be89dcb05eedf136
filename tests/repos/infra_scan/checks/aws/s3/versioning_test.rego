package checks.aws.s3.versioning_test

import data.checks.aws.s3.versioning
import data.lib.testing

versioning_resource(bucket, status) := testing.resource("aws_s3_bucket_versioning", bucket, {
	"bucket": bucket,
	"versioning_configuration": [{"status": status, "mfa_delete": null}],
})

test_enabled_versioning_passes if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "state", {"bucket": "acme-tf-state"}),
		versioning_resource("acme-tf-state", "Enabled"),
	])
	count(versioning.deny) == 0 with input as inp
}

test_suspended_versioning_is_denied if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "state", {"bucket": "acme-tf-state"}),
		versioning_resource("acme-tf-state", "Suspended"),
	])
	findings := versioning.deny with input as inp
	{f.severity | some f in findings} == {"MEDIUM"}
	{f.id | some f in findings} == {"AWS-S3-003"}
}

test_inline_versioning_block if {
	enabled := testing.resource("aws_s3_bucket", "a", {"bucket": "a", "versioning": [{"enabled": true, "mfa_delete": false}]})
	disabled := testing.resource("aws_s3_bucket", "b", {"bucket": "b", "versioning": [{"enabled": false, "mfa_delete": false}]})
	{f.resource | some f in versioning.deny} == {"aws_s3_bucket.b"} with input as testing.plan([enabled, disabled])
}
