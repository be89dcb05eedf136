package authz.roles_test

import data.authz.roles
import rego.v1

test_admin_expands_to_every_inherited_role if {
	roles.expand(["admin"]) == {"admin", "editor", "viewer", "auditor", "support"}
}

test_viewer_expands_to_itself if {
	roles.expand(["viewer"]) == {"viewer"}
}

test_editor_permissions if {
	roles.permissions(["editor"]) == {"orders:read", "orders:write", "orders:update", "products:read"}
}

test_wildcards_cover_every_action if {
	roles.grants({"users:*"}, "users:admin")
	roles.grants({"users:*"}, "users:read")
	not roles.grants({"users:*"}, "orders:read")
	not roles.grants({"orders:read"}, "orders:write")
}

test_unknown_roles_are_reported if {
	roles.unknown(["viewer", "superuser", "root"]) == {"superuser", "root"}
}

test_inheritors_of_viewer if {
	roles.inheritors("viewer") == {"admin", "editor", "support"}
}

test_hierarchy_with_mocked_roles if {
	mocked := {
		"a": {"inherits": ["b"], "permissions": ["x:1"]},
		"b": {"inherits": ["c"], "permissions": ["x:2"]},
		"c": {"permissions": ["x:3"]},
		"d": {"permissions": ["x:4"]},
	}
	roles.permissions(["a"]) == {"x:1", "x:2", "x:3"} with data.roles as mocked
	roles.hierarchy == {"a": ["b"], "b": ["c"], "c": [], "d": []} with data.roles as mocked
}

test_cyclic_inheritance_terminates if {
	mocked := {
		"a": {"inherits": ["b"], "permissions": ["p:a"]},
		"b": {"inherits": ["a"], "permissions": ["p:b"]},
	}
	roles.permissions(["a"]) == {"p:a", "p:b"} with data.roles as mocked
}
