package checks.aws.vpc.admin_ports_test

import data.checks.aws.vpc.admin_ports
import data.lib.testing

sg(name, ingress) := testing.resource("aws_security_group", name, {"name": name, "ingress": ingress, "egress": []})

ingress(proto, from, to, cidrs) := {
	"protocol": proto,
	"from_port": from,
	"to_port": to,
	"cidr_blocks": cidrs,
	"ipv6_cidr_blocks": [],
	"description": "",
}

test_ssh_from_anywhere if {
	inp := testing.plan([sg("bastion", [ingress("tcp", 22, 22, ["0.0.0.0/0"])])])
	findings := admin_ports.deny with input as inp
	[f.msg | some f in findings] == ["aws_security_group.bastion allows ingress from 0.0.0.0/0 to port 22"]
	[f.severity | some f in findings] == ["CRITICAL"]
	[f.title | some f in findings] == ["Administration port open to the internet"]
}

test_ssh_from_vpn_range_passes if {
	inp := testing.plan([sg("bastion", [ingress("tcp", 22, 22, ["10.8.0.0/16"])])])
	count(admin_ports.deny) == 0 with input as inp
}

test_https_from_anywhere_passes if {
	inp := testing.plan([sg("lb", [ingress("tcp", 443, 443, ["0.0.0.0/0"])])])
	count(admin_ports.deny) == 0 with input as inp
}

test_port_range_and_all_protocols if {
	inp := testing.plan([sg("legacy", [
		ingress("tcp", 0, 5000, ["0.0.0.0/0"]),
		ingress("-1", 0, 0, ["10.0.0.0/8"]),
	])])
	ports := {f.msg | some f in admin_ports.deny} with input as inp
	ports == {
		"aws_security_group.legacy allows ingress from 0.0.0.0/0 to port 22",
		"aws_security_group.legacy allows ingress from 0.0.0.0/0 to port 3389",
	}
}

# The rules in admin_ports_rules.rego share the package metadata, and the
# document-scoped title there applies to the rules of admin_ports.rego too.
test_standalone_rule_resources if {
	old := testing.resource("aws_security_group_rule", "rdp", {
		"type": "ingress", "protocol": "tcp", "from_port": 3389, "to_port": 3389,
		"cidr_blocks": [], "ipv6_cidr_blocks": ["::/0"], "security_group_id": "sg-123",
	})
	new := testing.resource("aws_vpc_security_group_ingress_rule", "winrm", {
		"ip_protocol": "tcp", "from_port": 5985, "to_port": 5986, "cidr_ipv4": "0.0.0.0/0",
	})
	egress := json.patch(old, [{"op": "replace", "path": "/values/type", "value": "egress"}])
	findings := admin_ports.deny with input as testing.plan([old, new, egress])
	{f.msg | some f in findings} == {
		"aws_security_group_rule.rdp allows ingress from ::/0 to port 3389",
		"aws_vpc_security_group_ingress_rule.winrm allows ingress from 0.0.0.0/0 to port 5985",
	}
	every f in findings {
		f.id == "AWS-VPC-001"
		f.title == "Administration port open to the internet"
	}
}

test_admin_ports_come_from_config if {
	inp := testing.plan([sg("db", [ingress("tcp", 5432, 5432, ["0.0.0.0/0"])])])
	count(admin_ports.deny) == 0 with input as inp
	count(admin_ports.deny) == 1 with input as inp with data.config.admin_ports as [5432]
}
