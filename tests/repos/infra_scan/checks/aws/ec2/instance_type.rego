# METADATA
# title: Instance type not approved
# description: |
#   Only instance types on the approved list (checks/aws/ec2/data.json, mounted
#   at data.checks.aws.ec2.approved_instance_types) may be launched.
# custom:
#   id: AWS-EC2-003
#   severity: LOW
#   recommended_actions: Pick an approved type or request an addition to the list.
package checks.aws.ec2.instance_type

import data.checks.aws.ec2.approved_instance_types as approved
import data.lib.aws
import data.lib.result

deny contains res if {
	some instance in aws.resources_of("aws_instance")
	not instance.values.instance_type in approved
	msg := sprintf("%s uses instance type %s, which is not approved", [instance.address, instance.values.instance_type])
	res := result.new(msg, instance, rego.metadata.chain())
}
