# METADATA
# title: Findings
# description: |
#   Builds the finding objects that checks put into their `deny` sets, from
#   the check's annotations (`rego.metadata.chain()` or `rego.metadata.rule()`).
package lib.result

# Severities from most to least severe.
severities := ["CRITICAL", "HIGH", "MEDIUM", "LOW"]

# rank("HIGH") == 3; unknown severities rank lowest.
rank(severity) := 4 - i if {
	some i, s in severities
	s == upper(severity)
} else := 0

# The custom annotations of a metadata chain, merged so that the entries
# nearest to the rule win over those of the package and its parents.
custom(chain) := object.union_n([c |
	some entry in array.reverse(chain)
	c := object.get(entry, ["annotations", "custom"], {})
])

# The first title found walking from the rule outwards.
title(chain) := titles[0] if {
	titles := [t | some entry in chain; t := entry.annotations.title]
	count(titles) > 0
} else := "untitled check"

# A finding for a check whose metadata comes from rego.metadata.chain().
new(msg, resource, chain) := {
	"id": c.id,
	"title": title(chain),
	"msg": msg,
	"severity": upper(c.severity),
	"resource": address(resource),
	"provider": object.get(c, "provider", "generic"),
} if {
	c := custom(chain)
}

# A finding for a check whose metadata comes from rego.metadata.rule().
from_rule(msg, resource, meta) := {
	"id": meta.custom.id,
	"title": object.get(meta, "title", "untitled check"),
	"msg": msg,
	"severity": upper(meta.custom.severity),
	"resource": address(resource),
	"provider": object.get(meta.custom, "provider", "generic"),
}

# Resources are either plan resources (with an address) or plain strings.
address(resource) := resource if is_string(resource)

address(resource) := resource.address if has_address(resource)

# Not `not is_string(resource.address)`: OPA evaluates the reference before
# the negation, so that expression is undefined when there is no address.
address(resource) := "<unknown>" if {
	not is_string(resource)
	not has_address(resource)
}

has_address(resource) if {
	is_object(resource)
	is_string(resource.address)
}
