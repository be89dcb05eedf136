package outcomes

import rego.v1

default allow := false

allow if input.user == "admin"

allow if {
	input.user == "bob"
	input.action == "read"
}

limits := {"admin": 100, "bob": 5}

quota(user) := limits[user]
