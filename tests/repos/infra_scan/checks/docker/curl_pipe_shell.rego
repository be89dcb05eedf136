# This check predates lib.result: its findings are plain strings prefixed with
# "[ID/SEVERITY]", which the scan aggregator parses back into findings.
package checks.docker.curl_pipe_shell

import data.lib.docker

# METADATA
# title: Remote script piped into a shell
# description: curl | sh runs unverified code at build time.
# custom:
#   id: DOCKER-006
#   severity: MEDIUM
deny contains msg if {
	some run in docker.all_instructions("run")
	text := docker.run_text(run)
	regex.match(`(curl|wget)[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`, text)
	meta := rego.metadata.rule()
	msg := sprintf("[%s/%s] %s: line %d downloads a script and pipes it into a shell", [meta.custom.id, meta.custom.severity, docker.path, run.line])
}
