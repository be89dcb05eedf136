# METADATA
# title: S3 bucket versioning disabled
# description: Versioning protects objects against accidental deletion and overwrites.
# custom:
#   id: AWS-S3-003
#   severity: MEDIUM
#   recommended_actions: Add an aws_s3_bucket_versioning resource with status Enabled.
package checks.aws.s3.versioning

import data.lib.aws
import data.lib.result

deny contains res if {
	some bucket in aws.resources_of("aws_s3_bucket")
	not versioned(bucket)
	res := result.new(sprintf("Bucket %q is not versioned", [aws.bucket_name(bucket)]), bucket, rego.metadata.chain())
}

# Inline block (provider v3).
versioned(bucket) if {
	some v in bucket.values.versioning
	v.enabled == true
}

# aws_s3_bucket_versioning (provider v4+).
versioned(bucket) if {
	some v in aws.resources_of("aws_s3_bucket_versioning")
	aws.attached_to_bucket(v, bucket)
	some conf in v.values.versioning_configuration
	conf.status == "Enabled"
}
