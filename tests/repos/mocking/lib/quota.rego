# Quota usage from the nightly snapshot in data.usage.
package lib.quota

account(name) := data.usage.accounts[name]

used_percent(name) := round((100 * a.used) / a.limit) if a := account(name)

remaining(name) := max([0, a.limit - a.used]) if a := account(name)

status(name) := "blocked" if {
	used_percent(name) >= data.config.quota.hard_limit
} else := "throttled" if {
	used_percent(name) >= data.config.quota.throttle_at
} else := "ok"
