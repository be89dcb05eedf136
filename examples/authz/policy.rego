# A small role-based access control policy.
#
# A request is allowed when one of the user's roles grants the requested
# action on the requested resource type, or when the user owns the resource
# and only reads it. Suspended users are never allowed.
package authz

# Which actions each role may perform, per resource type.
role_grants := {
	"admin": {"document": {"read", "write", "delete"}, "report": {"read", "write", "delete"}},
	"editor": {"document": {"read", "write"}, "report": {"read"}},
	"viewer": {"document": {"read"}, "report": {"read"}},
}

default allow := false

allow if {
	not suspended
	some role in input.user.roles
	input.action in role_grants[role][input.resource.type]
}

allow if {
	not suspended
	input.action == "read"
	input.resource.owner == input.user.name
}

suspended if input.user.suspended == true

# Every action the user may perform on the resource, for explanations.
permitted_actions contains action if {
	not suspended
	some role in input.user.roles
	some action in role_grants[role][input.resource.type]
}

# Why a request is denied (empty when it is allowed).
reasons contains "user is suspended" if suspended

reasons contains msg if {
	not allow
	not suspended
	msg := sprintf("none of the roles %v may %s a %s", [input.user.roles, input.action, input.resource.type])
}
