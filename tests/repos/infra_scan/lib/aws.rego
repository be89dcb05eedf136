# Helpers for AWS resources in Terraform plans. The tag helpers live in
# aws_tags.rego (same package).
package lib.aws

import data.lib.terraform as tf

# All planned resources of one AWS resource type.
resources_of(type) := tf.of_type(type)

# The name of an S3 bucket: its `bucket` argument, or the resource name when
# the bucket name is generated.
bucket_name(bucket) := bucket.values.bucket if is_string(bucket.values.bucket)

else := bucket.name

# Whether another resource points at the bucket through its `bucket` argument.
attached_to_bucket(resource, bucket) if resource.values.bucket == bucket_name(bucket)

# CIDR blocks that mean "the whole internet".
public_cidrs := {"0.0.0.0/0", "::/0"}

is_public_cidr(cidr) if cidr in public_cidrs

# Whether a from/to port range with a protocol covers `port`. Protocol "-1"
# means every protocol and every port.
covers_port(rule, _) if rule.protocol == "-1"

covers_port(rule, port) if {
	rule.protocol in {"tcp", "6"}
	rule.from_port <= port
	port <= rule.to_port
}

# Every CIDR block of a rule, IPv4 and IPv6.
cidrs(rule) := array.concat(object.get(rule, "cidr_blocks", []), object.get(rule, "ipv6_cidr_blocks", []))

# The region of the default AWS provider.
region := tf.provider_constant(tf.providers.aws, "region")
