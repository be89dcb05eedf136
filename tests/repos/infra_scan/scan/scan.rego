# METADATA
# title: Scan aggregator
# description: |
#   Runs every check under data.checks against the input and collects their
#   findings. Checks are discovered by walking data.checks for `deny` sets, so
#   a new check only needs a new package. The report (report.rego, same
#   package) summarises the findings.
package scan


# [path, findings] for every check package: path is the package path below
# data.checks, e.g. ["aws", "s3", "encryption"].
check_results contains [array.slice(path, 0, count(path) - 1), value] if {
	some path, value
	walk(data.checks, [path, value])
	count(path) > 1
	path[count(path) - 1] == "deny"
	is_set(value)
}

# Every check that ran, as a dotted name.
checks_run := {concat(".", path) | some [path, _] in check_results}

# Every finding, before exemptions.
raw_findings contains finding if {
	some [path, findings] in check_results
	some item in findings
	finding := normalize(item, path)
}

normalize(item, _) := item if is_object(item)

# Legacy checks return "[ID/SEVERITY] message" strings.
normalize(item, path) := legacy(item, path) if is_string(item)

legacy(msg, path) := finding if {
	[_, id, severity, text] := regex.find_all_string_submatch_n(`^\[([A-Z0-9-]+)/([A-Z]+)\] (.*)$`, msg, 1)[0]
	finding := {
		"id": id,
		"title": concat(".", path),
		"msg": text,
		"severity": severity,
		"resource": document_name,
		"provider": path[0],
	}
} else := {
	"id": concat(".", path),
	"title": concat(".", path),
	"msg": msg,
	"severity": "MEDIUM",
	"resource": document_name,
	"provider": path[0],
}

# What the scanned document is called, for findings that do not name a resource.
document_name := input.dockerfile.path if input.dockerfile.path

else := "<input>"

# A finding is exempt when an unexpired exemption names its check and a
# glob matching its resource.
exempt(finding) if {
	some exemption in data.exemptions.rules
	exemption.id == finding.id
	some pattern in exemption.resources
	glob.match(pattern, ["."], finding.resource)
	time.now_ns() < time.parse_rfc3339_ns(exemption.expires)
}

findings := {f | some f in raw_findings; not exempt(f)}

exempted := raw_findings - findings
