package checks.terraform.provider_version_test

import data.checks.terraform.provider_version
import data.lib.testing

plan_with(constraint) := json.patch(testing.plan([]), [{"op": "replace", "path": "/configuration/provider_config/aws/version_constraint", "value": constraint}])

test_pessimistic_constraint_passes if {
	count(provider_version.deny) == 0 with input as plan_with("~> 5.40")
}

test_open_ended_constraint_is_reported if {
	findings := provider_version.deny with input as plan_with(">= 4.0")
	[[f.id, f.provider, f.resource] | some f in findings] == [["TF-001", "terraform", "provider.aws"]]
}

test_missing_constraint_is_reported if {
	inp := json.remove(testing.plan([]), ["configuration/provider_config/aws/version_constraint"])
	count(provider_version.deny) == 1 with input as inp
}
