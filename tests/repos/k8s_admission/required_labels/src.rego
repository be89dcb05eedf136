# Objects must carry the labels the constraint lists, optionally matching a
# regular expression.
#
# parameters:
#   labels:  [{"key": "owner", "allowedRegex": "^[a-z-]+$"}]
#   message: optional sprintf format for the missing-labels violation
package k8srequiredlabels

import data.lib.k8s
import rego.v1

default_message := "you must provide labels: %v"

violation contains {"msg": msg, "details": {"missing_labels": missing}} if {
	not k8s.exempt
	provided := {key | some key, _ in k8s.labels(k8s.resource)}
	required := {label.key | some label in k8s.parameters.labels}
	missing := required - provided
	count(missing) > 0
	msg := sprintf(object.get(k8s.parameters, "message", default_message), [missing])
}

violation contains {"msg": msg} if {
	not k8s.exempt
	some expected in k8s.parameters.labels
	expected.allowedRegex != ""
	value := k8s.labels(k8s.resource)[expected.key]
	not regex.match(expected.allowedRegex, value)
	msg := sprintf("label <%v: %v> does not satisfy allowed regex: %v", [expected.key, value, expected.allowedRegex])
}
