# Per-route decisions, objects with the reasons of a denial.
package httpapi.reports

report := data.reports[input.params.report_id]

reasons contains "no such report" if not report

reasons contains "auditors only" if not "auditor" in input.identity.roles

reasons contains "a confidential report needs the clearance role" if {
	report.confidential
	not "clearance" in input.identity.roles
}

decision := {"allow": count(reasons) == 0, "reasons": reasons}

# Who the policy saw (the caller and the path of this very request).
whoami := {"allow": true, "user": input.identity.user, "path": input.path, "query": input.query}
