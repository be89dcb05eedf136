# METADATA
# title: S3 bucket access logging disabled
# description: |
#   Server access logs are needed for incident investigations. Buckets tagged
#   `purpose = logs` are the log targets themselves and are not checked.
# custom:
#   id: AWS-S3-004
#   severity: LOW
#   recommended_actions: Add an aws_s3_bucket_logging resource targeting the central log bucket.
package checks.aws.s3.logging

import data.lib.aws
import data.lib.result

deny contains res if {
	some bucket in aws.resources_of("aws_s3_bucket")
	not is_log_bucket(bucket)
	not logged(bucket)
	res := result.new(sprintf("Bucket %q has no access logging", [aws.bucket_name(bucket)]), bucket, rego.metadata.chain())
}

is_log_bucket(bucket) if lower(aws.tags(bucket).purpose) == "logs"

logged(bucket) if {
	is_array(bucket.values.logging)
	count(bucket.values.logging) > 0
}

logged(bucket) if {
	some l in aws.resources_of("aws_s3_bucket_logging")
	aws.attached_to_bucket(l, bucket)
	l.values.target_bucket != aws.bucket_name(bucket)
}
