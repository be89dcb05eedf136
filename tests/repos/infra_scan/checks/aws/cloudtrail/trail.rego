# METADATA
# title: CloudTrail configuration
# description: Trails must cover every region and protect their log files.
# related_resources:
#   - ref: https://docs.aws.amazon.com/awscloudtrail/latest/userguide/best-practices-security.html
# custom:
#   severity: MEDIUM
package checks.aws.cloudtrail.trail

import data.lib.aws
import data.lib.result

trails := aws.resources_of("aws_cloudtrail")

# METADATA
# title: Trail is not multi-region
# custom:
#   id: AWS-CT-001
#   severity: HIGH
deny contains res if {
	some trail in trails
	not trail.values.is_multi_region_trail
	res := result.new(sprintf("Trail %s only records events of one region", [trail.values.name]), trail, rego.metadata.chain())
}

# METADATA
# title: Log file validation disabled
# custom:
#   id: AWS-CT-002
deny contains res if {
	some trail in trails
	not trail.values.enable_log_file_validation
	res := result.new(sprintf("Trail %s does not validate log files", [trail.values.name]), trail, rego.metadata.chain())
}

# METADATA
# title: Trail logs are not encrypted with KMS
# custom:
#   id: AWS-CT-003
#   severity: LOW
deny contains res if {
	some trail in trails
	object.get(trail.values, "kms_key_id", null) == null
	res := result.new(sprintf("Trail %s does not use a KMS key", [trail.values.name]), trail, rego.metadata.chain())
}
