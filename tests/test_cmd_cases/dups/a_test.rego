# Two rules named test_same: OPA runs each as its own test (the second is test_same#01).
package dups

import rego.v1

test_same if {
	1 == 2
}

test_same if {
	1 == 1
}

todo_test_twice if false
