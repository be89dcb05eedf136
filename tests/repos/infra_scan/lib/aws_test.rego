package lib.aws_test

import data.lib.aws
import data.lib.terraform as tf
import data.lib.testing

nested_plan := {"planned_values": {"root_module": {
	"resources": [
		testing.resource("aws_s3_bucket", "a", {"bucket": "a"}),
		{"address": "data.aws_caller_identity.current", "mode": "data", "type": "aws_caller_identity", "name": "current", "values": {}},
	],
	"child_modules": [{
		"address": "module.net",
		"resources": [testing.module_resource("net", "aws_security_group", "web", {"name": "web"})],
		"child_modules": [{
			"address": "module.net.module.flow",
			"resources": [testing.module_resource("net.module.flow", "aws_s3_bucket", "flow_logs", {"bucket": "flow"})],
		}],
	}],
}}}

test_resources_from_nested_modules if {
	addresses := {r.address | some r in tf.resources} with input as nested_plan
	addresses == {"aws_s3_bucket.a", "module.net.aws_security_group.web", "module.net.module.flow.aws_s3_bucket.flow_logs"}
}

test_resources_of_type if {
	buckets := aws.resources_of("aws_s3_bucket") with input as nested_plan
	{aws.bucket_name(b) | some b in buckets} == {"a", "flow"}
}

test_bucket_name_falls_back_to_resource_name if {
	aws.bucket_name({"name": "logs", "values": {"bucket": null}}) == "logs"
	aws.bucket_name({"name": "logs", "values": {}}) == "logs"
	aws.bucket_name({"name": "logs", "values": {"bucket": "acme-logs"}}) == "acme-logs"
}

test_covers_port if {
	aws.covers_port({"protocol": "tcp", "from_port": 20, "to_port": 25}, 22)
	aws.covers_port({"protocol": "-1", "from_port": 0, "to_port": 0}, 3389)
	not aws.covers_port({"protocol": "udp", "from_port": 0, "to_port": 65535}, 22)
	not aws.covers_port({"protocol": "tcp", "from_port": 23, "to_port": 80}, 22)
}

test_tags_prefer_tags_all if {
	aws.tags({"values": {"tags": {"a": "1"}, "tags_all": {"a": "1", "b": "2"}}}) == {"a": "1", "b": "2"}
	aws.tags({"values": {"tags": {"a": "1"}, "tags_all": null}}) == {"a": "1"}
	aws.tags({"values": {"tags": null}}) == {}
}

test_missing_tags if {
	r := {"values": {"tags": {"owner": "x", "environment": ""}}}
	aws.missing_tags(r, ["owner", "environment", "cost-center"]) == {"environment", "cost-center"}
}

test_default_provider_region if {
	aws.region == "eu-west-1" with input as testing.plan([])
	not aws.region with input as {"configuration": {"provider_config": {}}}
}
