# Inputs for the scan tests: one Terraform plan, one Dockerfile, one manifest.
package scan_test

import data.lib.testing

all_tags := {"owner": "data", "cost-center": "cc-42", "environment": "prod"}

plan := testing.plan([
	# Compliant bucket, apart from logging.
	testing.resource("aws_s3_bucket", "reports", {"bucket": "acme-reports", "tags": all_tags}),
	testing.resource("aws_s3_bucket_server_side_encryption_configuration", "reports", {"bucket": "acme-reports"}),
	testing.resource("aws_s3_bucket_versioning", "reports", {"bucket": "acme-reports", "versioning_configuration": [{"status": "Enabled"}]}),
	testing.resource("aws_s3_bucket_public_access_block", "reports", {
		"bucket": "acme-reports",
		"block_public_acls": true,
		"block_public_policy": true,
		"ignore_public_acls": true,
		"restrict_public_buckets": true,
	}),
	# The log target: no logging of its own (exempted), otherwise compliant.
	testing.resource("aws_s3_bucket", "access_logs", {"bucket": "acme-access-logs", "tags": all_tags}),
	testing.resource("aws_s3_bucket_server_side_encryption_configuration", "access_logs", {"bucket": "acme-access-logs"}),
	testing.resource("aws_s3_bucket_versioning", "access_logs", {"bucket": "acme-access-logs", "versioning_configuration": [{"status": "Enabled"}]}),
	testing.resource("aws_s3_bucket_public_access_block", "access_logs", {
		"bucket": "acme-access-logs",
		"block_public_acls": true,
		"block_public_policy": true,
		"ignore_public_acls": true,
		"restrict_public_buckets": true,
	}),
	testing.resource("aws_s3_bucket_logging", "reports", {"bucket": "acme-reports", "target_bucket": "acme-access-logs"}),
	# A GPU worker with an expired exemption for its instance type.
	testing.resource("aws_instance", "gpu_worker", {
		"instance_type": "p4d.24xlarge",
		"metadata_options": [{"http_tokens": "required"}],
		"root_block_device": [{"encrypted": true}],
		"tags": all_tags,
	}),
	# A bastion open to the world.
	testing.resource("aws_security_group", "bastion", {
		"name": "bastion",
		"tags": object.remove(all_tags, ["cost-center"]),
		"ingress": [{"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": ["0.0.0.0/0"]}],
	}),
])

dockerfile := testing.dockerfile("tools/lint.Dockerfile", [testing.stage(null, "python:3.12-slim", [
	testing.instruction("run", ["curl -sSL https://install.example.com | sh"], 2),
	testing.instruction("user", ["nobody"], 3),
])])

manifest := testing.deployment("api", {"containers": [{"name": "api", "image": "api:1", "securityContext": {"privileged": true}}]})

# A moment before the GPU worker's exemption expired (2024-06-30).
may_2024 := time.parse_rfc3339_ns("2024-05-01T00:00:00Z")

# A moment after it expired.
jan_2025 := time.parse_rfc3339_ns("2025-01-15T12:00:00Z")
