# Quota states and overage charges, from the usage snapshot (data.usage)
# through lib.quota.
package billing

import data.lib.quota

blocked contains name if {
	some name, _ in data.usage.accounts
	quota.status(name) == "blocked"
}

throttled contains name if {
	some name, _ in data.usage.accounts
	quota.status(name) == "throttled"
}

# Charges for the invoice run: units over the limit times the unit price.
overage[name] := charge if {
	some name, usage in data.usage.accounts
	excess := usage.used - usage.limit
	excess > 0
	charge := excess * data.config.quota.overage_price_per_unit
}

# Whether input.account may start new jobs.
default admit := false

admit if quota.status(input.account) != "blocked"

warning := sprintf("account %s has used %d%% of its quota", [input.account, quota.used_percent(input.account)]) if {
	quota.status(input.account) == "throttled"
}
