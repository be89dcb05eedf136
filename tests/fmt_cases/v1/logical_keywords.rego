package logical

import future.keywords.and
import future.keywords.not
import future.keywords.or

# written as it stands: the parser rewrites these expressions
either if input.a or input.b
both if {
	input.a and input.b
	{input.c} and (input.d or input.e)
}
neither if {
	not (input.a or input.b)
	not {
		input.c
		input.d
	}
}
