# Helpers for Terraform plan JSON (`terraform show -json`).
package lib.terraform

# Every managed resource in the plan, in the root module and in every
# (nested) child module.
resources contains r if {
	some path, value
	walk(input.planned_values, [path, value])
	count(path) > 0
	path[count(path) - 1] == "resources"
	is_array(value)
	some r in value
	r.mode == "managed"
}

# Resources of one type.
of_type(type) := {r | some r in resources; r.type == type}

# The provider configurations, keyed by "aws", "aws.eu", ...
providers := object.get(input, ["configuration", "provider_config"], {})

# A constant expression of a provider configuration, e.g. its region.
provider_constant(cfg, name) := cfg.expressions[name].constant_value

is_plan if input.planned_values
