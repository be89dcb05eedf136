package checks.aws.general.tagging_test

import data.checks.aws.general.tagging
import data.lib.testing

all_tags := {"owner": "payments", "cost-center": "cc-1234", "environment": "prod"}

test_fully_tagged_resources_pass if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "a", {"bucket": "a", "tags": all_tags}),
		testing.resource("aws_instance", "b", {"tags": null, "tags_all": all_tags}),
	])
	count(tagging.deny) == 0 with input as inp
}

test_missing_and_blank_tags if {
	inp := testing.plan([testing.resource("aws_instance", "web", {"tags": {"owner": "web", "environment": "  "}})])
	[f.msg | some f in tagging.deny] == ["aws_instance.web is missing the tags: cost-center, environment"] with input as inp
}

test_untaggable_types_are_ignored if {
	inp := testing.plan([testing.resource("aws_iam_policy", "p", {"policy": "{}"})])
	count(tagging.deny) == 0 with input as inp
}
