# Parameterized tests: one case per key of the test's object.
package params_test

import rego.v1

cases := [
	{"note": "one", "in": 1, "want": 2},
	{"note": "two", "in": 2, "want": 4},
	{"note": "three", "in": 3, "want": 7},
]

# "three" fails: its value is never made (the comparison fails after the case started).
test_double[tc.note] if {
	some tc in cases
	tc.in * 2 == tc.want
}

# The same, with the case marked where OPA injects it.
test_double_marked[tc.note] if {
	some tc in cases
	internal.test_case([tc.note])
	tc.in * 2 == tc.want
}

# All pass.
test_square[name] if {
	some name, n in {"a": 2, "b": 3}
	n * n > 3
}

# Nested cases: one level per key.
test_grid[x][y] if {
	some x in ["p", "q"]
	some y in ["r", "s"]
	not x == "q"
	y != ""
}

test_grid_marked[x][y] if {
	some x in ["p", "q"]
	some y in ["r", "s"]
	internal.test_case([x, y])
	not x == "q"
	y != ""
}

# Non-string keys are named by their JSON text.
test_numbers[n] if {
	some n in [1, 2, 3]
	n != 2
}
