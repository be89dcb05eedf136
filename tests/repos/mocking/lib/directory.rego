# Lookups in the user directory service. Disabled unless
# data.config.directory.enabled is true.
package lib.directory

import data.config.directory as settings

profile(user_id) := response.body if {
	settings.enabled == true
	response := http.send({
		"method": "GET",
		"url": sprintf("%s/users/%s", [settings.url, user_id]),
		"headers": {"accept": "application/json"},
		"timeout": "2s",
		"raise_error": false,
	})
	response.status_code == 200
}

groups(user_id) := {g | some g in profile(user_id).groups}

in_group(user_id, group) if group in groups(user_id)
