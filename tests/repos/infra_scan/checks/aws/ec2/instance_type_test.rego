package checks.aws.ec2.instance_type_test

import data.checks.aws.ec2.instance_type
import data.lib.testing

test_approved_type_passes if {
	inp := testing.plan([testing.resource("aws_instance", "web", {"instance_type": "t3.small"})])
	count(instance_type.deny) == 0 with input as inp
}

test_gpu_instance_is_reported if {
	inp := testing.plan([testing.resource("aws_instance", "gpu_worker", {"instance_type": "p4d.24xlarge"})])
	findings := instance_type.deny with input as inp
	[f.msg | some f in findings] == ["aws_instance.gpu_worker uses instance type p4d.24xlarge, which is not approved"]
	[f.severity | some f in findings] == ["LOW"]
}

test_approved_list_can_be_replaced if {
	inp := testing.plan([testing.resource("aws_instance", "gpu_worker", {"instance_type": "p4d.24xlarge"})])
	count(instance_type.deny) == 0 with input as inp with data.checks.aws.ec2.approved_instance_types as ["p4d.24xlarge"]
}
