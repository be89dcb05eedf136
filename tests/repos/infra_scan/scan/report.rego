# The scan report: counts and the pass/fail verdict. Findings are collected
# in scan.rego.
package scan

import data.config.scan.fail_on
import data.lib.result

counts := {severity: n |
	some severity in result.severities
	n := count([f | some f in findings; f.severity == severity])
}

by_provider[provider] := count([f | some f in findings; f.provider == provider]) if {
	some f in findings
	provider := f.provider
}

# Findings at or above the configured severity fail the scan.
blocking := {f | some f in findings; result.rank(f.severity) >= result.rank(fail_on)}

default passed := false

passed if count(blocking) == 0

failed_checks := sort({f.id | some f in findings})

summary := {
	"passed": passed,
	"total": count(findings),
	"exempted": count(exempted),
	"by_severity": counts,
	"by_provider": by_provider,
	"failed_checks": failed_checks,
}
