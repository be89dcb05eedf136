package slow

import rego.v1

test_fast if true

test_slow if {
	count([x | some x in numbers.range(1, 100000000); x % 7 == 0]) > 0
}
