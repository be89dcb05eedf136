package cov_test

import data.cov
import rego.v1

test_admin if {
	cov.allow with input as {"role": "admin"}
}
