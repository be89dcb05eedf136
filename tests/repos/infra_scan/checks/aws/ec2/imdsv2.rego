# METADATA
# title: Instance metadata service v1 enabled
# description: |
#   IMDSv1 is vulnerable to SSRF attacks that steal instance credentials.
#   Instances and launch templates must require session tokens (IMDSv2).
# related_resources:
#   - ref: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html
# custom:
#   id: AWS-EC2-001
#   severity: HIGH
#   recommended_actions: Set metadata_options { http_tokens = "required" }.
package checks.aws.ec2.imdsv2

import data.lib.aws
import data.lib.result

checked_types := ["aws_instance", "aws_launch_template"]

deny contains res if {
	some type in checked_types
	some resource in aws.resources_of(type)
	not requires_tokens(resource)
	res := result.new(sprintf("%s does not require IMDSv2 session tokens", [resource.address]), resource, rego.metadata.chain())
}

requires_tokens(resource) if {
	some options in resource.values.metadata_options
	options.http_tokens == "required"
}

# Disabling the endpoint altogether is fine too.
requires_tokens(resource) if {
	some options in resource.values.metadata_options
	options.http_endpoint == "disabled"
}
