package lib.directory_test

import data.lib.directory
import data.lib.directory as dir

enabled := {"enabled": true, "url": "https://directory.test/api"}

echo_send(req) := {"status_code": 200, "body": req}

profile_with_groups(_) := {"groups": ["admins", "payments", "admins"]}

test_disabled_directory_is_not_called if {
	not directory.profile("u-1") with http.send as echo_send
}

test_request_shape if {
	req := directory.profile("u-42") with data.config.directory as enabled with http.send as echo_send
	req.method == "GET"
	req.url == "https://directory.test/api/users/u-42"
	req.timeout == "2s"
	req.raise_error == false
}

test_error_status_is_undefined if {
	not directory.profile("u-1") with data.config.directory.enabled as true with http.send as {"status_code": 503, "body": {}}
}

test_groups_from_a_mocked_profile if {
	directory.groups("u-1") == {"admins", "payments"} with directory.profile as profile_with_groups
	directory.groups("u-1") == set()
}

test_in_group_through_an_alias if {
	dir.in_group("u-1", "payments") with dir.profile as profile_with_groups
	not dir.in_group("u-1", "search") with dir.profile as profile_with_groups
	not dir.in_group("u-1", "payments")
}
