# METADATA
# title: Required tags missing
# description: Taggable resources must carry the tags in data.config.required_tags for cost allocation.
# custom:
#   id: AWS-GEN-002
#   severity: LOW
package checks.aws.general.tagging

import data.config.required_tags
import data.lib.aws as a
import data.lib.result

deny contains res if {
	some resource in a.taggable_resources
	missing := a.missing_tags(resource, required_tags)
	count(missing) > 0
	msg := sprintf("%s is missing the tags: %s", [resource.address, concat(", ", sort(missing))])
	res := result.new(msg, resource, rego.metadata.chain())
}
