package dups

import rego.v1

# A third test_same, in another file of the package: test_same#02.
test_same if true

todo_test_twice if false
