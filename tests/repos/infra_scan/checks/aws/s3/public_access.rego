# METADATA
# title: S3 bucket may be publicly accessible
# description: |
#   Buckets must not grant public ACLs and must have a public access block
#   with all four settings enabled.
# related_resources:
#   - ref: https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html
# custom:
#   id: AWS-S3-002
#   severity: CRITICAL
#   recommended_actions: Use private ACLs and add an aws_s3_bucket_public_access_block.
package checks.aws.s3.public_access

import data.lib.aws
import data.lib.result

public_acls := {"public-read", "public-read-write", "website"}

block_settings := ["block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"]

deny contains res if {
	some bucket in aws.resources_of("aws_s3_bucket")
	bucket.values.acl in public_acls
	msg := sprintf("Bucket %q uses the public ACL %q", [aws.bucket_name(bucket), bucket.values.acl])
	res := result.new(msg, bucket, rego.metadata.chain())
}

deny contains res if {
	some acl in aws.resources_of("aws_s3_bucket_acl")
	acl.values.acl in public_acls
	msg := sprintf("ACL resource grants %q on bucket %q", [acl.values.acl, acl.values.bucket])
	res := result.new(msg, acl, rego.metadata.chain())
}

deny contains res if {
	some bucket in aws.resources_of("aws_s3_bucket")
	not has_block(bucket)
	msg := sprintf("Bucket %q has no public access block", [aws.bucket_name(bucket)])
	res := result.new(msg, bucket, rego.metadata.chain())
}

deny contains res if {
	some block in aws.resources_of("aws_s3_bucket_public_access_block")
	disabled := [s | some s in block_settings; object.get(block.values, s, false) != true]
	count(disabled) > 0
	msg := sprintf("Public access block for %q does not enable %s", [block.values.bucket, concat(", ", disabled)])
	res := result.new(msg, block, rego.metadata.chain())
}

has_block(bucket) if {
	some block in aws.resources_of("aws_s3_bucket_public_access_block")
	aws.attached_to_bucket(block, bucket)
}
