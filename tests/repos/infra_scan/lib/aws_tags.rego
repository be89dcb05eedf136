# Tag helpers for package lib.aws (the rest of the package is in aws.rego).
package lib.aws

# Resource types that support tags and that the tagging policy applies to.
taggable_types := {
	"aws_s3_bucket",
	"aws_instance",
	"aws_ebs_volume",
	"aws_db_instance",
	"aws_security_group",
	"aws_cloudtrail",
}

taggable_resources contains r if {
	some type in taggable_types
	some r in resources_of(type)
}

# The effective tags of a resource: tags_all includes the provider's
# default_tags, tags only the resource's own.
tags(resource) := resource.values.tags_all if is_object(resource.values.tags_all)

else := resource.values.tags if is_object(resource.values.tags)

else := {}

has_tag(resource, key) if {
	value := tags(resource)[key]
	trim_space(value) != ""
}

missing_tags(resource, required) := {key |
	some key in required
	not has_tag(resource, key)
}
