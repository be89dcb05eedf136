# Tests for both RDS checks (public.rego and storage.rego).
package checks.aws.rds_test

import data.checks.aws.rds
import data.lib.testing

db(name, values) := testing.resource("aws_db_instance", name, object.union({
	"identifier": name,
	"engine": "postgres",
	"instance_class": "db.t3.medium",
	"storage_encrypted": true,
	"backup_retention_period": 14,
	"publicly_accessible": false,
}, values))

test_compliant_database if {
	inp := testing.plan([db("orders", {})])
	count(rds.public.deny) == 0 with input as inp
	count(rds.storage.deny) == 0 with input as inp
}

test_public_database if {
	inp := testing.plan([db("orders", {"publicly_accessible": true})])
	[f.msg | some f in rds.public.deny] == ["Database orders is publicly accessible"] with input as inp
	[f.severity | some f in rds.public.deny] == ["CRITICAL"] with input as inp
}

test_unencrypted_storage_has_rule_id if {
	inp := testing.plan([db("orders", {"storage_encrypted": false})])
	findings := rds.storage.deny with input as inp
	[[f.id, f.severity, f.title] | some f in findings] == [["AWS-RDS-002", "HIGH", "Unencrypted database storage"]]
}

test_backup_retention if {
	cluster := testing.resource("aws_rds_cluster", "analytics", {"storage_encrypted": true, "backup_retention_period": 1})
	inp := testing.plan([db("orders", {"backup_retention_period": 0}), cluster])
	findings := rds.storage.deny with input as inp
	{[f.id, f.severity, f.msg] | some f in findings} == {
		["AWS-RDS-003", "MEDIUM", "aws_db_instance.orders keeps backups for 0 days, 7 required"],
		["AWS-RDS-003", "MEDIUM", "aws_rds_cluster.analytics keeps backups for 1 days, 7 required"],
	}
}

test_retention_setting_is_read_from_config if {
	inp := testing.plan([db("orders", {"backup_retention_period": 10})])
	count(rds.storage.deny) == 0 with input as inp
	count(rds.storage.deny) == 1 with input as inp with data.config.rds as {"min_backup_retention_days": 30}
}
