# METADATA
# title: Provider version not constrained
# description: Providers without a version constraint change unexpectedly on `terraform init -upgrade`.
# custom:
#   id: TF-001
#   severity: LOW
#   provider: terraform
package checks.terraform.provider_version

import data.lib.result
import data.lib.terraform

deny contains res if {
	some name, provider in terraform.providers
	not constrained(provider)
	res := result.new(sprintf("Provider %s has no version constraint", [name]), sprintf("provider.%s", [name]), rego.metadata.chain())
}

constrained(provider) if {
	is_string(provider.version_constraint)
	provider.version_constraint != ""
	# ">= x" alone still allows any future major version.
	not regex.match(`^\s*>=?\s*[0-9.]+\s*$`, provider.version_constraint)
}
