# METADATA
# title: Unencrypted EBS volume
# description: EBS volumes, including instance root and block devices, must be encrypted.
# custom:
#   id: AWS-EC2-002
#   severity: MEDIUM
#   recommended_actions: Set encrypted = true, or enable EBS encryption by default for the account.
package checks.aws.ec2.ebs_encryption

import data.lib.aws as awslib
import data.lib.result

# Root volumes hold the operating system and often cached credentials.
#
# METADATA
# title: Unencrypted instance root volume
# custom:
#   severity: HIGH
deny contains res if {
	some instance in awslib.resources_of("aws_instance")
	not ebs_default_encryption
	some device in instance.values.root_block_device
	not device.encrypted
	res := result.new(sprintf("Root volume of %s is not encrypted", [instance.address]), instance, rego.metadata.chain())
}

deny contains res if {
	some instance in awslib.resources_of("aws_instance")
	not ebs_default_encryption
	some device in instance.values.ebs_block_device
	not device.encrypted
	msg := sprintf("Block device %s of %s is not encrypted", [device.device_name, instance.address])
	res := result.new(msg, instance, rego.metadata.chain())
}

deny contains res if {
	some volume in awslib.resources_of("aws_ebs_volume")
	not ebs_default_encryption
	not volume.values.encrypted
	res := result.new(sprintf("%s is not encrypted", [volume.address]), volume, rego.metadata.chain())
}

# aws_ebs_encryption_by_default encrypts every new volume of the account.
ebs_default_encryption if {
	some setting in awslib.resources_of("aws_ebs_encryption_by_default")
	setting.values.enabled == true
}
