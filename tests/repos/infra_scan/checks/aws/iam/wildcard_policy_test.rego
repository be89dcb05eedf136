package checks.aws.iam.wildcard_policy_test

import data.checks.aws.iam.wildcard_policy
import data.lib.testing

policy(name, statements) := testing.resource("aws_iam_policy", name, {
	"name": name,
	"policy": json.marshal({"Version": "2012-10-17", "Statement": statements}),
})

test_admin_policy_is_denied if {
	inp := testing.plan([policy("admin", [{"Effect": "Allow", "Action": "*", "Resource": "*"}])])
	findings := wildcard_policy.deny with input as inp
	[f.msg | some f in findings] == [`aws_iam_policy.admin allows "*"`]
}

test_service_wildcard_on_all_resources if {
	inp := testing.plan([policy("s3_admin", [
		{"Effect": "Allow", "Action": ["s3:*", "kms:Decrypt"], "Resource": ["*"]},
		{"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:eu-west-1:123456789012:jobs"},
	])])
	{f.msg | some f in wildcard_policy.deny} == {`aws_iam_policy.s3_admin allows "s3:*"`} with input as inp
}

test_deny_statements_are_ignored if {
	inp := testing.plan([policy("guard", [{"Effect": "Deny", "Action": "*", "Resource": "*"}])])
	count(wildcard_policy.deny) == 0 with input as inp
}

test_unknown_policy_document_is_skipped if {
	role_policy := testing.resource("aws_iam_role_policy", "computed", {"name": "computed", "policy": null})
	broken := testing.resource("aws_iam_user_policy", "broken", {"policy": "{not json"})
	count(wildcard_policy.deny) == 0 with input as testing.plan([role_policy, broken])
}
