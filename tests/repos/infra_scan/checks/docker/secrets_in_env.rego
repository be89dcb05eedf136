package checks.docker.secrets_in_env

import data.config.docker.secret_env_patterns as patterns
import data.lib.docker
import data.lib.result

# METADATA
# title: Secret baked into the image
# description: ENV and ARG values end up in the image metadata, readable by anyone who can pull it.
# custom:
#   id: DOCKER-005
#   severity: CRITICAL
#   provider: docker
#   recommended_actions: Use build secrets (RUN --mount=type=secret) or inject at runtime.
deny contains res if {
	some cmd in ["env", "arg"]
	some instruction in docker.all_instructions(cmd)
	some [key, value] in pairs(instruction.args)
	value != ""
	some pattern in patterns
	regex.match(pattern, key)
	msg := sprintf("%s %s sets a value for a secret-looking variable", [upper(cmd), key])
	res := result.from_rule(msg, docker.location(instruction.line), rego.metadata.rule())
}

# ENV/ARG arguments are "KEY=value" strings; `ARG NAME` has no value.
pairs(args) := [[key, value] |
	some arg in args
	parts := split(arg, "=")
	key := parts[0]
	value := concat("=", array.slice(parts, 1, count(parts)))
]
