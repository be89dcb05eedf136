# METADATA
# title: Publicly accessible database
# description: RDS instances and clusters must not get a public IP address.
# custom:
#   id: AWS-RDS-001
#   severity: CRITICAL
#   recommended_actions: Set publicly_accessible = false and connect through the VPC.
package checks.aws.rds.public

import data.lib.aws
import data.lib.result

deny contains res if {
	some db in aws.resources_of("aws_db_instance")
	db.values.publicly_accessible == true
	res := result.new(sprintf("Database %s is publicly accessible", [db.values.identifier]), db, rego.metadata.chain())
}
