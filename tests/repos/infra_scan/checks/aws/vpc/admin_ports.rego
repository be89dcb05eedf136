# METADATA
# title: Security group administration ports
# description: |
#   Security groups must not allow ingress from 0.0.0.0/0 or ::/0 to the
#   administration ports listed in data.config.admin_ports (SSH, RDP, WinRM).
#   Inline ingress blocks are checked here; standalone rules are checked in
#   admin_ports_rules.rego.
# related_resources:
#   - ref: https://docs.aws.amazon.com/vpc/latest/userguide/vpc-security-groups.html
# custom:
#   id: AWS-VPC-001
#   severity: CRITICAL
#   recommended_actions: Restrict the source CIDR to the VPN range or use SSM Session Manager.
package checks.aws.vpc.admin_ports

import data.config.admin_ports
import data.lib.aws
import data.lib.result

deny contains res if {
	some sg in aws.resources_of("aws_security_group")
	some rule in sg.values.ingress
	some finding in exposures(rule)
	msg := sprintf("%s allows ingress from %s to port %d", [sg.address, finding.cidr, finding.port])
	res := result.new(msg, sg, rego.metadata.chain())
}

# Every (public CIDR, admin port) pair a rule exposes.
exposures(rule) := {{"cidr": cidr, "port": port} |
	some cidr in aws.cidrs(rule)
	aws.is_public_cidr(cidr)
	some port in admin_ports
	aws.covers_port(rule, port)
}
