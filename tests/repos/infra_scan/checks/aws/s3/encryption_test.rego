package checks.aws.s3.encryption_test

import data.checks.aws.s3.encryption
import data.lib.testing

sse_config(bucket) := testing.resource("aws_s3_bucket_server_side_encryption_configuration", bucket, {
	"bucket": bucket,
	"rule": [{"apply_server_side_encryption_by_default": [{"sse_algorithm": "aws:kms"}]}],
})

test_unencrypted_bucket_is_denied if {
	inp := testing.plan([testing.resource("aws_s3_bucket", "reports", {"bucket": "acme-reports"})])
	findings := encryption.deny with input as inp
	count(findings) == 1
	some f in findings
	f.id == "AWS-S3-001"
	f.severity == "HIGH"
	f.provider == "aws"
	f.resource == "aws_s3_bucket.reports"
	f.msg == `Bucket "acme-reports" has no server-side encryption configured`
	f.title == "S3 bucket without server-side encryption"
}

test_separate_encryption_resource_passes if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "reports", {"bucket": "acme-reports"}),
		sse_config("acme-reports"),
	])
	count(encryption.deny) == 0 with input as inp
}

test_inline_encryption_block_passes if {
	inp := testing.plan([testing.resource("aws_s3_bucket", "legacy", {
		"bucket": "acme-legacy",
		"server_side_encryption_configuration": [{"rule": [{"apply_server_side_encryption_by_default": [{"sse_algorithm": "AES256"}]}]}],
	})])
	count(encryption.deny) == 0 with input as inp
}

test_encryption_for_another_bucket_does_not_count if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "reports", {"bucket": "acme-reports"}),
		sse_config("acme-other"),
	])
	count(encryption.deny) == 1 with input as inp
}

test_buckets_in_child_modules_are_checked if {
	inp := {"planned_values": {"root_module": {
		"resources": [],
		"child_modules": [{
			"address": "module.data",
			"resources": [testing.module_resource("data", "aws_s3_bucket", "raw", {"bucket": null, "server_side_encryption_configuration": null})],
		}],
	}}}
	findings := encryption.deny with input as inp
	[f.resource | some f in findings] == ["module.data.aws_s3_bucket.raw"]
	[f.msg | some f in findings] == [`Bucket "raw" has no server-side encryption configured`]
}
