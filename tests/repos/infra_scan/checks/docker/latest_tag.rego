package checks.docker.latest_tag

import data.config.docker.trusted_registries
import data.lib.docker
import data.lib.result

# METADATA
# title: Base image not pinned
# description: |
#   Base images must use an explicit tag other than `latest`. Images from
#   untrusted registries must also be pinned by digest.
# custom:
#   id: DOCKER-002
#   severity: MEDIUM
#   provider: docker
deny contains res if {
	some stage in docker.stages
	not exempt(stage)
	some problem in problems(stage.base)
	msg := sprintf("Stage %s: image %q %s", [stage_label(stage), stage.base, problem])
	res := result.from_rule(msg, docker.location(stage.line), rego.metadata.rule())
}

problems(image) := untagged(image) | latest(image) | unpinned(image)

untagged(image) := {"has no tag" | not docker.image_tag(image); not docker.image_digest(image)}

latest(image) := {"uses the latest tag" | docker.image_tag(image) == "latest"}

unpinned(image) := {"is not pinned by digest" |
	not docker.image_digest(image)
	not docker.image_registry(image) in trusted_registries
}

exempt(stage) if docker.from_stage(stage)

exempt(stage) if docker.is_scratch(stage)

stage_label(stage) := stage.name if is_string(stage.name)

else := "<unnamed>"
