package checks.aws.s3.logging_test

import data.checks.aws.s3.logging
import data.lib.testing

test_bucket_without_logging if {
	inp := testing.plan([testing.resource("aws_s3_bucket", "app", {"bucket": "acme-app", "logging": []})])
	findings := logging.deny with input as inp
	count(findings) == 1
	some f in findings
	f.severity == "LOW"
	f.msg == `Bucket "acme-app" has no access logging`
}

test_log_bucket_is_skipped if {
	inp := testing.plan([testing.resource("aws_s3_bucket", "access_logs", {
		"bucket": "acme-access-logs",
		"tags": {"purpose": "Logs", "owner": "platform"},
	})])
	count(logging.deny) == 0 with input as inp
}

test_logging_to_itself_does_not_count if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "app", {"bucket": "acme-app"}),
		testing.resource("aws_s3_bucket_logging", "app", {"bucket": "acme-app", "target_bucket": "acme-app", "target_prefix": "log/"}),
	])
	count(logging.deny) == 1 with input as inp
}

test_logging_to_central_bucket_passes if {
	inp := testing.plan([
		testing.resource("aws_s3_bucket", "app", {"bucket": "acme-app"}),
		testing.resource("aws_s3_bucket_logging", "app", {"bucket": "acme-app", "target_bucket": "acme-access-logs", "target_prefix": "app/"}),
	])
	not any_finding with input as inp
}

any_finding if some _ in logging.deny
