package compr

arr := [x | some x in input.xs; x > 1]
st := {x | some x in input.xs}
obj := {k: v | some k, v in input.obj}
multi := [x |
    some x in input.xs
    x > 1
]
multi_obj := {k: v |
    some k, v in input.obj
}
below := {
    k: v | some k, v in input.obj
}
union_term := [(a | b) | some a in input.a; b := input.b]
nested := [[y | some y in x] | some x in input.xss]
