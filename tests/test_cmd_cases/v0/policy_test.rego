package v0pol

test_pod_without_team_denied {
	count(deny) == 1 with input as {"kind": "Pod", "labels": {}}
}

test_pod_with_team_allowed {
	count(deny) == 0 with input as {"kind": "Pod", "labels": {"team": "a"}}
}

test_service_ignored {
	count(deny) == 0 with input as {"kind": "Service"}
}
