package lib.docker_test

import data.lib.docker

test_image_tag if {
	docker.image_tag("nginx:1.25") == "1.25"
	docker.image_tag("registry.example.com:5000/team/app:v2") == "v2"
	docker.image_tag("app:v2@sha256:abcd") == "v2"
	not docker.image_tag("localhost:5000/team/app")
	not docker.image_tag("ubuntu")
}

test_image_digest if {
	docker.image_digest("app@sha256:abcd") == "sha256:abcd"
	not docker.image_digest("app:1.0")
}

test_image_registry if {
	docker.image_registry("nginx") == "docker.io"
	docker.image_registry("library/nginx:1.25") == "docker.io"
	docker.image_registry("ghcr.io/acme/tool:1") == "ghcr.io"
	docker.image_registry("localhost/app") == "localhost"
	docker.image_registry("localhost:5000/app") == "localhost:5000"
}

test_stages if {
	inp := {"dockerfile": {"path": "Dockerfile", "stages": [
		{"name": "build", "base": "golang:1.22", "line": 1, "instructions": [{"cmd": "run", "args": ["make"], "line": 2}]},
		{"name": null, "base": "build", "line": 4, "instructions": [{"cmd": "run", "args": ["echo", "hi"], "line": 5}]},
	]}}
	docker.stage_names == {"build"} with input as inp
	docker.final_stage.line == 4 with input as inp
	docker.from_stage(docker.final_stage) with input as inp
	[docker.run_text(i) | some i in docker.all_instructions("run")] == ["make", "echo hi"] with input as inp
	docker.location(5) == "Dockerfile:5" with input as inp
}
