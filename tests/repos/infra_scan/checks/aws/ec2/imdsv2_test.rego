package checks.aws.ec2.imdsv2_test

import data.checks.aws.ec2.imdsv2
import data.lib.testing

instance(name, options) := testing.resource("aws_instance", name, {
	"ami": "ami-0c55b159cbfafe1f0",
	"instance_type": "t3.micro",
	"metadata_options": options,
})

test_required_tokens_pass if {
	inp := testing.plan([instance("web", [{"http_tokens": "required", "http_endpoint": "enabled"}])])
	count(imdsv2.deny) == 0 with input as inp
}

test_optional_tokens_fail if {
	inp := testing.plan([instance("web", [{"http_tokens": "optional", "http_endpoint": "enabled"}])])
	{f.msg | some f in imdsv2.deny} == {"aws_instance.web does not require IMDSv2 session tokens"} with input as inp
}

test_missing_options_and_launch_template if {
	tpl := testing.resource("aws_launch_template", "workers", {"name_prefix": "workers-"})
	inp := testing.plan([instance("web", []), tpl])
	findings := imdsv2.deny with input as inp
	count(findings) == 2
	every f in findings {
		f.id == "AWS-EC2-001"
		f.severity == "HIGH"
	}
}

test_disabled_endpoint_passes if {
	inp := testing.plan([instance("batch", [{"http_tokens": "optional", "http_endpoint": "disabled"}])])
	count(imdsv2.deny) == 0 with input as inp
}
