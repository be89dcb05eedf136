# Dockerfile checks use rule-level annotations and rego.metadata.rule():
# the rule's annotations carry everything the finding needs.
package checks.docker.root_user

import data.lib.docker
import data.lib.result

# METADATA
# title: Image runs as root
# description: |
#   The final stage must switch to an unprivileged user. Without a USER
#   instruction containers run as root.
# related_resources:
#   - ref: https://docs.docker.com/develop/develop-images/instructions/#user
# custom:
#   id: DOCKER-001
#   severity: HIGH
#   provider: docker
#   recommended_actions: Add `USER 10001` (or a named user) at the end of the final stage.
deny contains res if {
	user := final_user
	is_root(user.name)
	msg := sprintf("Final stage runs as %q", [user.name])
	res := result.from_rule(msg, docker.location(user.line), rego.metadata.rule())
}

# The last USER of the final stage; root when there is none.
final_user := {"name": users[count(users) - 1].args[0], "line": users[count(users) - 1].line} if {
	users := docker.instructions(docker.final_stage, "user")
	count(users) > 0
} else := {"name": "root", "line": docker.final_stage.line}

is_root(user) if {
	name := split(user, ":")[0]
	name in {"root", "0"}
}
