package checks.docker.healthcheck

import data.lib.docker
import data.lib.result

# METADATA
# title: No HEALTHCHECK
# description: The final stage should declare a HEALTHCHECK so orchestrators can detect hung processes.
# custom:
#   id: DOCKER-004
#   severity: LOW
#   provider: docker
deny contains res if {
	count(docker.stages) > 0
	not has_healthcheck
	res := result.from_rule("Final stage has no HEALTHCHECK instruction", docker.location(docker.final_stage.line), rego.metadata.rule())
}

# `HEALTHCHECK NONE` explicitly disables an inherited check.
has_healthcheck if {
	some hc in docker.instructions(docker.final_stage, "healthcheck")
	upper(hc.args[0]) != "NONE"
}
