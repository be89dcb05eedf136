# Input builders shared by the tests of all checks.
package lib.testing

plan(resources) := {
	"format_version": "1.2",
	"terraform_version": "1.7.5",
	"planned_values": {"root_module": {"resources": resources}},
	"configuration": {"provider_config": {"aws": aws_provider("eu-west-1")}},
}

aws_provider(region) := {
	"name": "aws",
	"full_name": "registry.terraform.io/hashicorp/aws",
	"version_constraint": "~> 5.40",
	"expressions": {"region": {"constant_value": region}},
}

resource(type, name, values) := {
	"address": sprintf("%s.%s", [type, name]),
	"mode": "managed",
	"type": type,
	"name": name,
	"provider_name": "registry.terraform.io/hashicorp/aws",
	"values": values,
}

# A resource inside a child module.
module_resource(module, type, name, values) := object.union(resource(type, name, values), {
	"address": sprintf("module.%s.%s.%s", [module, type, name]),
})

dockerfile(file, stages) := {"dockerfile": {"path": file, "stages": stages}}

stage(name, base, instructions) := {"name": name, "base": base, "line": 1, "instructions": instructions}

instruction(cmd, args, line) := {"cmd": cmd, "args": args, "line": line}

deployment(name, pod) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": name, "namespace": "payments"},
	"spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": name}}, "spec": pod}},
}
