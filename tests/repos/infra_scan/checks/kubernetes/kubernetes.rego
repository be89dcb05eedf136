# METADATA
# description: Checks for Kubernetes workload manifests.
# scope: subpackages
# custom:
#   provider: kubernetes
#   input_format: manifest
package checks.kubernetes
