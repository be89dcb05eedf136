# METADATA
# title: Resources deployed outside the allowed regions
# description: Data residency rules only allow the regions in data.config.allowed_regions.
# custom:
#   id: AWS-GEN-001
#   severity: HIGH
#   recommended_actions: Change the provider region or request an exception.
package checks.aws.general.regions

import data.config.allowed_regions
import data.lib.result
import data.lib.terraform

deny contains res if {
	some name, provider in terraform.providers
	startswith(provider.name, "aws")
	region := terraform.provider_constant(provider, "region")
	not region in allowed_regions
	msg := sprintf("Provider %s deploys to %s, allowed regions are %s", [name, region, concat(", ", allowed_regions)])
	res := result.new(msg, sprintf("provider.%s", [name]), rego.metadata.chain())
}
