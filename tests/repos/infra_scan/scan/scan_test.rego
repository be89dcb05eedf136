package scan_test

import data.scan

test_every_check_package_is_discovered if {
	count(scan.checks_run) == 26
	"aws.s3.encryption" in scan.checks_run
	"aws.vpc.admin_ports" in scan.checks_run
	"docker.curl_pipe_shell" in scan.checks_run
	"kubernetes.non_root" in scan.checks_run
	"terraform.provider_version" in scan.checks_run
	# Test packages and base data under data.checks are not checks.
	not "aws.s3.encryption_test" in scan.checks_run
	not "aws.ec2" in scan.checks_run
}

test_empty_input_passes if {
	scan.summary == {
		"passed": true,
		"total": 0,
		"exempted": 0,
		"by_severity": {"CRITICAL": 0, "HIGH": 0, "MEDIUM": 0, "LOW": 0},
		"by_provider": {},
		"failed_checks": [],
	} with input as {}
}

test_plan_summary_while_exemption_is_valid if {
	s := scan.summary with input as plan with time.now_ns as may_2024
	s.total == 2
	s.exempted == 2
	s.by_severity == {"CRITICAL": 1, "HIGH": 0, "MEDIUM": 0, "LOW": 1}
	s.failed_checks == ["AWS-GEN-002", "AWS-VPC-001"]
	s.passed == false
}

test_expired_exemption_no_longer_applies if {
	s := scan.summary with input as plan with time.now_ns as jan_2025
	s.failed_checks == ["AWS-EC2-003", "AWS-GEN-002", "AWS-VPC-001"]
	s.exempted == 1
	s.by_provider == {"aws": 3}
}

test_log_bucket_exemption_is_permanent if {
	exempted := scan.exempted with input as plan with time.now_ns as jan_2025
	[f.resource | some f in exempted] == ["aws_s3_bucket.access_logs"]
}

test_blocking_findings_follow_the_threshold if {
	blocking := scan.blocking with input as plan with time.now_ns as jan_2025
	{f.id | some f in blocking} == {"AWS-VPC-001"}

	# With a LOW threshold everything blocks; with CRITICAL only the bastion.
	count(scan.blocking) == 3 with input as plan with time.now_ns as jan_2025 with data.config.scan.fail_on as "LOW"
	scan.passed with input as plan with data.checks.aws.vpc.admin_ports.deny as set()
}

test_legacy_string_findings_are_parsed if {
	findings := scan.findings with input as dockerfile with time.now_ns as may_2024
	some f in findings
	f == {
		"id": "DOCKER-006",
		"title": "docker.curl_pipe_shell",
		"msg": "tools/lint.Dockerfile: line 2 downloads a script and pipes it into a shell",
		"severity": "MEDIUM",
		"resource": "tools/lint.Dockerfile",
		"provider": "docker",
	}
}

test_unparseable_legacy_message if {
	findings := scan.findings with input as dockerfile with data.checks.docker.curl_pipe_shell.deny as {"something odd"}
	some f in findings
	f.id == "docker.curl_pipe_shell"
	f.msg == "something odd"
	f.severity == "MEDIUM"
}

test_dockerfile_passes_with_glob_exemption if {
	s := scan.summary with input as dockerfile with time.now_ns as may_2024
	s.passed
	s.by_severity.MEDIUM == 2
	[f.id | some f in scan.exempted] == ["DOCKER-004"] with input as dockerfile with time.now_ns as may_2024
}

test_exemptions_can_be_replaced if {
	s := scan.summary with input as dockerfile with data.exemptions.rules as []
	s.exempted == 0
	s.failed_checks == ["DOCKER-002", "DOCKER-004", "DOCKER-006"]
}

test_manifest_fails_on_privileged_container if {
	s := scan.summary with input as manifest
	not s.passed
	s.by_provider == {"kubernetes": 3}
	s.failed_checks == ["K8S-001", "K8S-003", "K8S-004"]
}

test_findings_carry_metadata_from_every_level if {
	findings := scan.findings with input as manifest
	every f in findings {
		f.provider == "kubernetes" # from the checks.kubernetes subpackages annotation
		startswith(f.id, "K8S-") # from the package annotation
		f.resource == "Deployment/payments/api"
	}
}
