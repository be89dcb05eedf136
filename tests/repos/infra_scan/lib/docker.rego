# Helpers for parsed Dockerfiles:
#
#   input.dockerfile = {
#     "path": "services/api/Dockerfile",
#     "stages": [{"name": "build", "base": "golang:1.22", "line": 1,
#                 "instructions": [{"cmd": "run", "args": ["go build ./..."], "line": 4}]}]
#   }
package lib.docker

path := input.dockerfile.path

stages := input.dockerfile.stages

final_stage := stages[count(stages) - 1]

# Names given to stages with `FROM image AS name`.
stage_names := {s.name | some s in stages; is_string(s.name)}

# Instructions of one kind (lower-case: "run", "user", ...) in a stage.
instructions(stage, cmd) := [i | some i in stage.instructions; i.cmd == cmd]

# Instructions of one kind in every stage.
all_instructions(cmd) := [i | some stage in stages; some i in stage.instructions; i.cmd == cmd]

# A location string for findings: "path:line".
location(line) := sprintf("%s:%d", [path, line])

# The parts of an image reference "registry/repo:tag@digest".
image_digest(image) := split(image, "@")[1] if contains(image, "@")

image_tag(image) := tag if {
	name := split(image, "@")[0]
	segments := split(name, "/")
	last := segments[count(segments) - 1]
	contains(last, ":")
	tag := split(last, ":")[1]
}

image_registry(image) := segments[0] if {
	segments := split(image, "/")
	count(segments) > 1
	regex.match(`[.:]|^localhost$`, segments[0])
}

else := "docker.io"

# The base image of a stage is another stage (`FROM build`), not an image.
from_stage(stage) if stage.base in stage_names

is_scratch(stage) if stage.base == "scratch"

# The shell text of a RUN instruction (exec form is joined with spaces).
run_text(instruction) := concat(" ", instruction.args)
