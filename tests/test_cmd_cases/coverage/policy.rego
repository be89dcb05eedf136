package cov

import rego.v1

default allow := false

allow if {
	input.role == "admin"
}

allow if {
	input.role == "reader"
	input.method == "GET"
}

unused := 1 if {
	input.never
}
