package checks.aws.s3.public_access_test

import data.checks.aws.s3.public_access
import data.lib.testing

full_block(bucket) := testing.resource("aws_s3_bucket_public_access_block", bucket, {
	"bucket": bucket,
	"block_public_acls": true,
	"block_public_policy": true,
	"ignore_public_acls": true,
	"restrict_public_buckets": true,
})

test_private_bucket_with_block_passes if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "assets", {"bucket": "acme-assets", "acl": "private"}),
		full_block("acme-assets"),
	])
	count(public_access.deny) == 0 with input as inp
}

test_public_read_acl_is_critical if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "site", {"bucket": "acme-site", "acl": "public-read"}),
		full_block("acme-site"),
	])
	findings := public_access.deny with input as inp
	count(findings) == 1
	some f in findings
	f.severity == "CRITICAL"
	f.id == "AWS-S3-002"
	f.msg == `Bucket "acme-site" uses the public ACL "public-read"`
}

test_missing_block_and_public_acl_resource if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "site", {"bucket": "acme-site"}),
		testing.resource("aws_s3_bucket_acl", "site", {"bucket": "acme-site", "acl": "public-read-write"}),
	])
	msgs := {f.msg | some f in public_access.deny} with input as inp
	msgs == {
		`Bucket "acme-site" has no public access block`,
		`ACL resource grants "public-read-write" on bucket "acme-site"`,
	}
}

test_partial_block_lists_disabled_settings if {
	block := json.patch(full_block("acme-data"), [
		{"op": "replace", "path": "/values/ignore_public_acls", "value": false},
		{"op": "remove", "path": "/values/restrict_public_buckets"},
	])
	inp := testing.plan([testing.resource("aws_s3_bucket", "data", {"bucket": "acme-data"}), block])
	[f.msg | some f in public_access.deny] == [`Public access block for "acme-data" does not enable ignore_public_acls, restrict_public_buckets`] with input as inp
}
