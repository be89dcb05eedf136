package checks.aws.iam.password_policy_test

import data.checks.aws.iam.password_policy
import data.lib.testing

account_policy(values) := testing.plan([testing.resource("aws_iam_account_password_policy", "strict", values)])

test_strong_policy_passes if {
	inp := account_policy({"minimum_password_length": 16, "max_password_age": 60, "require_symbols": true})
	count(password_policy.deny) == 0 with input as inp
}

test_short_passwords_that_never_expire if {
	inp := account_policy({"minimum_password_length": 8, "max_password_age": 0})
	{f.msg | some f in password_policy.deny} == {
		"minimum password length is 8, at least 14 is required",
		"passwords never expire",
	} with input as inp
}

test_rotation_limit_from_config if {
	inp := account_policy({"minimum_password_length": 14, "max_password_age": 180})
	[f.msg | some f in password_policy.deny] == ["passwords expire after 180 days, at most 90 are allowed"] with input as inp
	count(password_policy.deny) == 0 with input as inp with data.config.iam.max_password_age_days as 365
}
