package heads

default allow = false
default   limit:=10

allow = true if { input.admin }
ok   if   input.ok
full := {"a": 1}
name = "x" if input.y
fruits contains "apple"
fruits contains "pear" if input.pear
nums contains n if some n in [1, 2]
scores["alice"] = 10
scores[k] := v if { some k, v in input.scores }
a.b.c := 1
a.b.d if input.d
a.b[x] := true if x := "k"
flag[x] if x := "y"
const_body if { true }
f(x) = x * 2
g(x, y) if { x > y }
h(_) := 1
empty_args := 3
