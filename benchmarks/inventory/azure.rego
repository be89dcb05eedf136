# Azure resources: storage accounts, virtual machines, network security groups.
package inventory.azure

import data.inventory.lib
import rego.v1

allowed_regions := {"eastus", "westus2", "northeurope", "westeurope"}

allowed_vm_sizes := {"Standard_D2s_v3", "Standard_D4s_v3", "Standard_B2s", "Standard_E8s_v4"}

dangerous_ports := {22, 3389, 1433, 3306, 5432, 6379, 27017}

open_sources := {"*", "Internet", "0.0.0.0/0"}

required_tags := {"environment", "owner"}

storage := input.properties if input.type == "Microsoft.Storage/storageAccounts"

vm := input.properties if input.type == "Microsoft.Compute/virtualMachines"

nsg := input.properties if input.type == "Microsoft.Network/networkSecurityGroups"

deny contains msg if {
	storage.supportsHttpsTrafficOnly != true
	msg := sprintf("%s: accepts plain HTTP", [lib.resource_id])
}

deny contains msg if {
	storage.minimumTlsVersion != "TLS1_2"
	msg := sprintf("%s: minimum TLS version is %s, not TLS1_2", [lib.resource_id, storage.minimumTlsVersion])
}

deny contains msg if {
	storage.allowBlobPublicAccess == true
	msg := sprintf("%s: blobs may be public", [lib.resource_id])
}

deny contains msg if {
	some service, settings in storage.encryption.services
	settings.enabled != true
	msg := sprintf("%s: %s encryption is off", [lib.resource_id, service])
}

deny contains msg if {
	storage.networkAcls.defaultAction != "Deny"
	msg := sprintf("%s: network default action is %s", [lib.resource_id, storage.networkAcls.defaultAction])
}

deny contains msg if {
	vm
	not input.location in allowed_regions
	msg := sprintf("%s: region %s is not allowed", [lib.resource_id, input.location])
}

deny contains msg if {
	not vm.hardwareProfile.vmSize in allowed_vm_sizes
	msg := sprintf("%s: size %s is not allowed", [lib.resource_id, vm.hardwareProfile.vmSize])
}

deny contains msg if {
	vm.storageProfile.osDisk.encryptionSettings.enabled != true
	msg := sprintf("%s: OS disk is not encrypted", [lib.resource_id])
}

deny contains msg if {
	vm.osProfile.linuxConfiguration.disablePasswordAuthentication == false
	msg := sprintf("%s: password authentication is enabled", [lib.resource_id])
}

deny contains msg if {
	vm.osProfile.adminUsername in {"admin", "root", "administrator"}
	msg := sprintf("%s: admin user name %q is guessable", [lib.resource_id, vm.osProfile.adminUsername])
}

deny contains msg if {
	some rule in nsg.securityRules
	p := rule.properties
	p.direction == "Inbound"
	p.access == "Allow"
	p.sourceAddressPrefix in open_sources
	some port in dangerous_ports
	port_in_range(port, p.destinationPortRange)
	msg := sprintf("%s: rule %s opens port %d to the Internet", [lib.resource_id, rule.name, port])
}

deny contains msg if {
	input.type
	missing := required_tags - {k | some k, _ in input.tags}
	count(missing) > 0
	msg := sprintf("%s: missing tags %v", [lib.resource_id, sort(missing)])
}

port_in_range(port, range) if {
	regex.match(`^[0-9]+$`, range)
	to_number(range) == port
}

port_in_range(port, range) if {
	regex.match(`^[0-9]+-[0-9]+$`, range)
	bounds := split(range, "-")
	to_number(bounds[0]) <= port
	port <= to_number(bounds[1])
}

owner := input.tags.owner
