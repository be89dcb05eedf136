# Tests with every outcome `opa test` reports: PASS, FAIL, ERROR and SKIPPED.
package outcomes_test

import data.outcomes
import rego.v1

test_admin_allowed if {
	outcomes.allow with input as {"user": "admin"}
}

test_bob_reads if {
	outcomes.allow with input as {"user": "bob", "action": "read"}
}

# FAIL: bob may not write.
test_bob_writes if {
	outcomes.allow with input as {"user": "bob", "action": "write"}
}

# FAIL at the comparison: the quota is 5.
test_bob_quota if {
	q := outcomes.quota("bob")
	q == 10
}

# FAIL: undefined (no such user).
test_unknown_quota if {
	outcomes.quota("eve") > 0
}

# FAIL with print output.
test_prints_then_fails if {
	print("quota of bob:", outcomes.quota("bob"))
	outcomes.quota("bob") == 6
}

# PASS with print output (shown only with -v).
test_prints_and_passes if {
	print("checked")
	true
}

# ERROR: two values for a complete rule.
test_conflict := x if {
	some x in [1, 2]
}

# FAIL: a builtin error is undefined when builtin errors are not strict (opa test's default).
test_divide_by_zero if {
	x := 0
	1 / x == 1
}

# FAIL: a test must be true, not just defined.
test_not_boolean := 42

test_false := false

# SKIPPED.
todo_test_later if {
	false
}

# A test named by a ref head.
nested.test_ref_head if true

# Mocking a function and data with `with`.
test_mocked_quota if {
	outcomes.quota("bob") == 7 with outcomes.quota as 7
	outcomes.allow with input.user as "admin"
	outcomes.quota("x") == 1 with data.outcomes.limits as {"x": 1}
}

test_negated_failure if {
	not outcomes.allow with input as {"user": "admin"}
}
