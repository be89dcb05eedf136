package elses

level := "high" if {
	input.score > 90
} else := "medium" if {
	input.score > 50
} else := "low"

grade := "a" if input.x > 1
else := "b" if input.x > 0
else := "c"

answer := 1 if {
	input.q
}

# else on its own line stays apart
else := 2

f(x) := "pos" if { x > 0 } else := "neg"

b := true if input.t else := false
