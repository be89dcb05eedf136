package checks.aws.ec2.ebs_encryption_test

import data.checks.aws.ec2.ebs_encryption
import data.lib.testing

instance := testing.resource("aws_instance", "db", {
	"instance_type": "m6i.large",
	"root_block_device": [{"encrypted": false, "volume_size": 50}],
	"ebs_block_device": [
		{"device_name": "/dev/sdf", "encrypted": true},
		{"device_name": "/dev/sdg", "encrypted": false},
	],
})

test_root_volume_uses_rule_severity if {
	findings := ebs_encryption.deny with input as testing.plan([instance])
	some f in findings
	f.msg == "Root volume of aws_instance.db is not encrypted"
	f.severity == "HIGH"
	f.title == "Unencrypted instance root volume"
	f.id == "AWS-EC2-002"
}

test_block_device_uses_package_severity if {
	findings := ebs_encryption.deny with input as testing.plan([instance])
	some f in findings
	f.msg == "Block device /dev/sdg of aws_instance.db is not encrypted"
	f.severity == "MEDIUM"
	f.title == "Unencrypted EBS volume"
	count(findings) == 2
}

test_standalone_volume if {
	vol := testing.resource("aws_ebs_volume", "scratch", {"availability_zone": "eu-west-1a", "size": 100})
	[f.msg | some f in ebs_encryption.deny] == ["aws_ebs_volume.scratch is not encrypted"] with input as testing.plan([vol])
}

test_default_encryption_silences_the_check if {
	default_on := testing.resource("aws_ebs_encryption_by_default", "this", {"enabled": true})
	count(ebs_encryption.deny) == 0 with input as testing.plan([instance, default_on])
}
