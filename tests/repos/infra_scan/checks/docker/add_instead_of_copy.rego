package checks.docker.add_instead_of_copy

import data.lib.docker
import data.lib.result

# METADATA
# title: ADD used for local files
# description: |
#   ADD silently extracts archives and fetches URLs. Use COPY for local files;
#   ADD is accepted for remote URLs and for archives that must be extracted.
# custom:
#   id: DOCKER-003
#   severity: LOW
#   provider: docker
deny contains res if {
	some add in docker.all_instructions("add")
	sources := [s | some s in array.slice(add.args, 0, count(add.args) - 1); not startswith(s, "--")]
	some src in sources
	not remote(src)
	not archive(src)
	res := result.from_rule(sprintf("Use COPY instead of ADD for %q", [src]), docker.location(add.line), rego.metadata.rule())
}

remote(src) if regex.match(`^(https?|git)://`, src)

archive(src) if {
	some ext in [".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz"]
	endswith(src, ext)
}
