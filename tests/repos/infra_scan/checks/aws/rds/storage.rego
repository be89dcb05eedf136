# METADATA
# title: Database storage and backups
# description: |
#   RDS storage must be encrypted and automated backups must be kept for at
#   least data.config.rds.min_backup_retention_days days.
# custom:
#   severity: HIGH
package checks.aws.rds.storage

import data.config.rds.min_backup_retention_days as min_days
import data.lib.aws
import data.lib.result

# METADATA
# title: Unencrypted database storage
# custom:
#   id: AWS-RDS-002
#   recommended_actions: Set storage_encrypted = true (requires a new instance and a snapshot restore).
deny contains res if {
	some db in databases
	not db.values.storage_encrypted
	res := result.new(sprintf("Storage of %s is not encrypted", [db.address]), db, rego.metadata.chain())
}

# METADATA
# title: Short backup retention
# custom:
#   id: AWS-RDS-003
#   severity: MEDIUM
#   recommended_actions: Raise backup_retention_period.
deny contains res if {
	some db in databases
	days := object.get(db.values, "backup_retention_period", 0)
	days < min_days
	msg := sprintf("%s keeps backups for %d days, %d required", [db.address, days, min_days])
	res := result.new(msg, db, rego.metadata.chain())
}

databases := aws.resources_of("aws_db_instance") | aws.resources_of("aws_rds_cluster")
