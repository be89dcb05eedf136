# METADATA
# title: IAM policy grants all actions
# description: |
#   Policies with `"Action": "*"` (or `service:*` on `"Resource": "*"`) give
#   far more access than any workload needs.
# related_resources:
#   - ref: https://docs.aws.amazon.com/IAM/latest/UserGuide/best-practices.html#grant-least-privilege
# custom:
#   id: AWS-IAM-001
#   severity: HIGH
#   recommended_actions: List the actions the workload needs.
package checks.aws.iam.wildcard_policy

import data.lib.aws
import data.lib.result

policy_types := {"aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy"}

deny contains res if {
	some type in policy_types
	some policy in aws.resources_of(type)
	some statement in statements(policy)
	statement.Effect == "Allow"
	some action in as_array(statement.Action)
	full_wildcard(action, statement)
	msg := sprintf("%s allows %q", [policy.address, action])
	res := result.new(msg, policy, rego.metadata.chain())
}

# The policy document is a JSON string in the plan. Unknown values
# (computed at apply time) are skipped.
statements(policy) := as_array(doc.Statement) if {
	is_string(policy.values.policy)
	json.is_valid(policy.values.policy)
	doc := json.unmarshal(policy.values.policy)
}

as_array(x) := x if is_array(x)

else := [x]

full_wildcard("*", _)

full_wildcard(action, statement) if {
	endswith(action, ":*")
	"*" in as_array(statement.Resource)
}
