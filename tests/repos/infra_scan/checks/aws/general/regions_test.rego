package checks.aws.general.regions_test

import data.checks.aws.general.regions
import data.lib.testing

with_providers(providers) := json.patch(testing.plan([]), [{"op": "replace", "path": "/configuration/provider_config", "value": providers}])

test_default_provider_in_allowed_region if {
	count(regions.deny) == 0 with input as testing.plan([])
}

test_aliased_provider_outside_allowed_regions if {
	inp := with_providers({
		"aws": testing.aws_provider("eu-west-1"),
		"aws.tokyo": object.union(testing.aws_provider("ap-northeast-1"), {"alias": "tokyo"}),
	})
	findings := regions.deny with input as inp
	[f.msg | some f in findings] == ["Provider aws.tokyo deploys to ap-northeast-1, allowed regions are eu-west-1, eu-central-1, us-east-1"]
	[f.resource | some f in findings] == ["provider.aws.tokyo"]
}

test_non_aws_providers_are_ignored if {
	inp := with_providers({"google": {"name": "google", "expressions": {"region": {"constant_value": "asia-east1"}}}})
	count(regions.deny) == 0 with input as inp
}

test_region_from_variable_is_not_known if {
	inp := with_providers({"aws": {"name": "aws", "expressions": {"region": {"references": ["var.region"]}}}})
	count(regions.deny) == 0 with input as inp
}
