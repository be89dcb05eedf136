# Role-based access control over data.roles (roles/data.json).
#
# A role grants its own permissions and those of every role it inherits
# from, transitively. A permission such as "users:*" covers every action on
# the resource.
package authz.roles

import rego.v1

# role name -> the roles it inherits from
hierarchy := {name: object.get(role, "inherits", []) | some name, role in data.roles}

# The assigned roles and every role they inherit from.
expand(assigned) := graph.reachable(hierarchy, assigned)

# The permissions granted by a list of roles.
permissions(assigned) := {perm |
	some role in expand(assigned)
	some perm in data.roles[role].permissions
}

# Is `required` covered by one of the `granted` permissions?
grants(granted, required) if required in granted

grants(granted, required) if {
	some pattern in granted
	endswith(pattern, ":*")
	glob.match(pattern, [":"], required)
}

# Assigned roles that data.roles does not define.
unknown(assigned) := {r | some r in assigned; not data.roles[r]}

# Roles that inherit (directly or not) from `role`.
inheritors(role) := {name |
	some name, _ in data.roles
	name != role
	role in expand([name])
}
