# Fixtures and helpers for the service tests (package service_test).
package service_test

import data.service

# Pinned instants (UTC). The operators' clock is UTC+1 (config/data.json).
tuesday_noon := 1699959600000000000 # 2023-11-14T11:00:00Z, 12:00 local

saturday_morning := 1700298000000000000 # 2023-11-18T09:00:00Z, 10:00 local

friday_late := 1700263800000000000 # 2023-11-17T23:30:00Z, already Saturday 00:30 local

during_maintenance := 1700449200000000000 # 2023-11-20T03:00:00Z, inside the window

maintainer := {"id": "u-100", "role": "maintainer", "team": "payments"}

viewer := {"id": "u-200", "role": "viewer", "team": "payments"}

outsider := {"id": "u-300", "role": "owner", "team": "search"}

admin := {"id": "u-root", "role": "viewer", "team": "platform"}

vip := {"id": "u-vip", "role": "owner", "team": "payments"}

request(method, user) := {
	"user": user,
	"request": {"method": method, "path": "/v1/ledger", "size_mb": 1, "region": "eu-west-1"},
	"resource": {"owner_team": "payments"},
}

with_size(inp, mb) := object.union(inp, {"request": {"size_mb": mb}})

# What the directory service knows, by user id.
profiles := {
	"u-100": {"plan": "enterprise", "groups": ["payments-oncall"]},
	"u-200": {"plan": "team", "groups": []},
	"u-300": {"plan": "free", "groups": [], "suspended": true},
}

directory_prefix := "https://directory.internal.example.com/api/v2/users/"

# Stands in for http.send, answering like the directory service.
mock_send(req) := {"status_code": 200, "body": profiles[id]} if {
	req.method == "GET"
	startswith(req.url, directory_prefix)
	id := substring(req.url, count(directory_prefix), -1)
	profiles[id]
} else := {"status_code": 404, "body": {"error": "no such user"}}

# The decision for an input, with the directory enabled and mocked.
decide(inp) := d if {
	d := service.decision with input as inp
		with data.config.directory.enabled as true
		with http.send as mock_send
}

# The decision at a fixed time: the `with` here wraps the ones in decide.
decide_at(inp, ns) := d if {
	d := decide(inp) with time.now_ns as ns
}

# A weekend decision, as another layer of helpers.
decide_on_weekend(inp) := decide_at(inp, saturday_morning)

never(_) := false

always(_) := true
