# METADATA
# title: Weak account password policy
# description: The account password policy must meet the minimum length and rotation set in data.config.iam.
# custom:
#   id: AWS-IAM-002
#   severity: MEDIUM
#   recommended_actions: Raise minimum_password_length and set max_password_age.
package checks.aws.iam.password_policy

import data.config.iam as settings
import data.lib.aws
import data.lib.result

deny contains res if {
	some [policy, problem] in problems
	res := result.new(problem, policy, rego.metadata.chain())
}

policies := aws.resources_of("aws_iam_account_password_policy")

# [policy, description] pairs.
problems contains [policy, msg] if {
	some policy in policies
	length := policy.values.minimum_password_length
	length < settings.min_password_length
	msg := sprintf("minimum password length is %d, at least %d is required", [length, settings.min_password_length])
}

problems contains [policy, "passwords never expire"] if {
	some policy in policies
	object.get(policy.values, "max_password_age", 0) == 0
}

problems contains [policy, msg] if {
	some policy in policies
	age := policy.values.max_password_age
	age > settings.max_password_age_days
	msg := sprintf("passwords expire after %d days, at most %d are allowed", [age, settings.max_password_age_days])
}
