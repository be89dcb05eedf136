package v0kw

import future.keywords

p if { 1 in [1, 2] }

q contains x if {
	some x in [1, 2]
}

r {
	every x in [1] { x > 0 }
}
