package bodies

p if { x := 1; y := 2; x < y }

q if {
    a := input.a


    b := input.b
    a == b
}

r if {
    input.r
}

s if { {1, 2} }

t if {
    x := input.x
    not x
    not   startswith(x, "a")
}

u if input.u
v if input.v

w := x if {
	x := count(input.items)
}
