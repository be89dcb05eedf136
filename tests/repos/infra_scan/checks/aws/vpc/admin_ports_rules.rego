# Standalone security group rules (aws_security_group_rule and
# aws_vpc_security_group_ingress_rule) for the admin ports check. The
# package's annotations are in admin_ports.rego.
package checks.aws.vpc.admin_ports

import data.lib.aws
import data.lib.result

# The title shown in findings, for every deny rule of the package, in both
# files: document scope applies to all rules with this name.
#
# METADATA
# scope: document
# title: Administration port open to the internet
deny contains res if {
	some rule in aws.resources_of("aws_security_group_rule")
	rule.values.type == "ingress"
	some finding in exposures(rule.values)
	msg := sprintf("%s allows ingress from %s to port %d", [rule.address, finding.cidr, finding.port])
	res := result.new(msg, rule, rego.metadata.chain())
}

# The newer resource has a single cidr_ipv4/cidr_ipv6 and ip_protocol.
deny contains res if {
	some rule in aws.resources_of("aws_vpc_security_group_ingress_rule")
	some finding in exposures(normalized(rule.values))
	msg := sprintf("%s allows ingress from %s to port %d", [rule.address, finding.cidr, finding.port])
	res := result.new(msg, rule, rego.metadata.chain())
}

normalized(values) := {
	"protocol": values.ip_protocol,
	"from_port": object.get(values, "from_port", 0),
	"to_port": object.get(values, "to_port", 65535),
	"cidr_blocks": [c | some c in [values.cidr_ipv4]; is_string(c)],
	"ipv6_cidr_blocks": [c | some c in [values.cidr_ipv6]; is_string(c)],
}
