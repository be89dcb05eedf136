# Tests for the Dockerfile checks.
package checks.docker_test

import data.checks.docker.add_instead_of_copy
import data.checks.docker.curl_pipe_shell
import data.checks.docker.healthcheck
import data.checks.docker.latest_tag
import data.checks.docker.root_user
import data.checks.docker.secrets_in_env
import data.lib.testing

instr(cmd, args, line) := testing.instruction(cmd, args, line)

api_image := testing.dockerfile("services/api/Dockerfile", [
	testing.stage("build", "golang:1.22-bookworm@sha256:2b4c5e1d", [
		instr("workdir", ["/src"], 2),
		instr("copy", [".", "."], 3),
		instr("run", ["go build -o /out/api ./cmd/api"], 4),
	]),
	testing.stage(null, "registry.internal.example.com/base/distroless:2024.03", [
		instr("copy", ["--from=build", "/out/api", "/api"], 7),
		instr("healthcheck", ["CMD", "/api", "healthz"], 8),
		instr("user", ["10001:10001"], 9),
		instr("entrypoint", ["/api"], 10),
	]),
])

# Replace the instructions of the final stage.
final_instructions(instructions) := json.patch(api_image, [{"op": "replace", "path": "/dockerfile/stages/1/instructions", "value": instructions}])

test_clean_image_has_no_findings if {
	count(root_user.deny) == 0 with input as api_image
	count(latest_tag.deny) == 0 with input as api_image
	count(add_instead_of_copy.deny) == 0 with input as api_image
	count(healthcheck.deny) == 0 with input as api_image
	count(secrets_in_env.deny) == 0 with input as api_image
	count(curl_pipe_shell.deny) == 0 with input as api_image
}

test_missing_user_means_root if {
	inp := final_instructions([instr("entrypoint", ["/api"], 7)])
	findings := root_user.deny with input as inp
	findings == {{
		"id": "DOCKER-001",
		"title": "Image runs as root",
		"msg": `Final stage runs as "root"`,
		"severity": "HIGH",
		"resource": "services/api/Dockerfile:1",
		"provider": "docker",
	}}
}

test_switching_back_to_root if {
	inp := final_instructions([instr("user", ["app"], 7), instr("run", ["apk add curl"], 8), instr("user", ["0:0"], 9)])
	[f.resource | some f in root_user.deny] == ["services/api/Dockerfile:9"] with input as inp
}

test_root_in_build_stage_only_is_fine if {
	# The build stage has no USER at all; only the final stage matters.
	not root_user.final_user.name == "root" with input as api_image
}

test_untagged_and_latest_images if {
	inp := testing.dockerfile("Dockerfile", [
		testing.stage("deps", "node", []),
		testing.stage("build", "deps", []),
		testing.stage(null, "nginx:latest", []),
		testing.stage("empty", "scratch", []),
	])
	{f.msg | some f in latest_tag.deny} == {
		`Stage deps: image "node" has no tag`,
		`Stage deps: image "node" is not pinned by digest`,
		`Stage <unnamed>: image "nginx:latest" uses the latest tag`,
		`Stage <unnamed>: image "nginx:latest" is not pinned by digest`,
	} with input as inp
}

test_registry_with_port_is_not_a_tag if {
	inp := testing.dockerfile("Dockerfile", [testing.stage(null, "localhost:5000/team/app", [])])
	{f.msg | some f in latest_tag.deny} == {
		`Stage <unnamed>: image "localhost:5000/team/app" has no tag`,
		`Stage <unnamed>: image "localhost:5000/team/app" is not pinned by digest`,
	} with input as inp
}

test_trusted_registry_needs_no_digest if {
	inp := testing.dockerfile("Dockerfile", [testing.stage(null, "registry.internal.example.com/base/python:3.12", [])])
	count(latest_tag.deny) == 0 with input as inp
	count(latest_tag.deny) == 1 with input as inp with data.config.docker.trusted_registries as []
}
