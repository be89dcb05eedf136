# METADATA
# title: S3 bucket without server-side encryption
# description: |
#   Objects in S3 buckets should be encrypted at rest. The bucket must either
#   carry an inline server_side_encryption_configuration block (AWS provider
#   v3) or have an aws_s3_bucket_server_side_encryption_configuration resource
#   attached to it (v4 and later).
# related_resources:
#   - ref: https://docs.aws.amazon.com/AmazonS3/latest/userguide/serv-side-encryption.html
#     description: Protecting data with server-side encryption
# custom:
#   id: AWS-S3-001
#   severity: HIGH
#   recommended_actions: Add an aws_s3_bucket_server_side_encryption_configuration using aws:kms.
package checks.aws.s3.encryption

import data.lib.aws
import data.lib.result

deny contains res if {
	some bucket in aws.resources_of("aws_s3_bucket")
	not encrypted(bucket)
	msg := sprintf("Bucket %q has no server-side encryption configured", [aws.bucket_name(bucket)])
	res := result.new(msg, bucket, rego.metadata.chain())
}

# Provider v3: inline block.
encrypted(bucket) if {
	blocks := bucket.values.server_side_encryption_configuration
	is_array(blocks)
	count(blocks) > 0
}

# Provider v4+: separate resource.
encrypted(bucket) if {
	some cfg in aws.resources_of("aws_s3_bucket_server_side_encryption_configuration")
	aws.attached_to_bucket(cfg, bucket)
}
