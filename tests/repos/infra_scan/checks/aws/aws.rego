# METADATA
# description: Checks for AWS resources in Terraform plans.
# scope: subpackages
# custom:
#   provider: aws
#   input_format: terraform-plan
package checks.aws
