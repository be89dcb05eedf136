# More Dockerfile check tests; the fixtures (api_image, instr, ...) are in
# docker_test.rego, the same package.
package checks.docker_test

import data.checks.docker.add_instead_of_copy
import data.checks.docker.curl_pipe_shell
import data.checks.docker.healthcheck
import data.checks.docker.secrets_in_env

test_add_of_local_files if {
	inp := final_instructions([
		instr("add", ["--chown=app", "config.yaml", "defaults/", "/etc/app/"], 7),
		instr("add", ["https://example.com/ca.pem", "/etc/ssl/ca.pem"], 8),
		instr("add", ["rootfs.tar.gz", "/"], 9),
		instr("user", ["app"], 10),
	])
	{f.msg | some f in add_instead_of_copy.deny} == {
		`Use COPY instead of ADD for "config.yaml"`,
		`Use COPY instead of ADD for "defaults/"`,
	} with input as inp
}

test_healthcheck_none_does_not_count if {
	inp := final_instructions([instr("healthcheck", ["NONE"], 7), instr("user", ["app"], 8)])
	[f.id | some f in healthcheck.deny] == ["DOCKER-004"] with input as inp
}

test_no_stages_no_healthcheck_finding if {
	count(healthcheck.deny) == 0 with input as {"dockerfile": {"path": "Dockerfile", "stages": []}}
}

test_secrets_in_env_and_arg if {
	inp := final_instructions([
		instr("arg", ["GITHUB_TOKEN"], 7),
		instr("arg", ["NPM_TOKEN=abc123"], 8),
		instr("env", ["DB_HOST=db", "DB_PASSWORD=s3cr3t=="], 9),
		instr("env", ["LOG_LEVEL=info"], 10),
		instr("user", ["app"], 11),
	])
	findings := secrets_in_env.deny with input as inp
	{f.msg | some f in findings} == {
		"ARG NPM_TOKEN sets a value for a secret-looking variable",
		"ENV DB_PASSWORD sets a value for a secret-looking variable",
	}
	{f.severity | some f in findings} == {"CRITICAL"}
}

test_curl_pipe_shell_message_format if {
	inp := final_instructions([
		instr("run", ["curl -fsSL https://get.example.sh | sudo bash"], 7),
		instr("run", ["wget -qO- https://example.com/x.tar.gz | tar xz"], 8),
		instr("user", ["app"], 9),
	])
	curl_pipe_shell.deny == {"[DOCKER-006/MEDIUM] services/api/Dockerfile: line 7 downloads a script and pipes it into a shell"} with input as inp
}
