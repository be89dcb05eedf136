package quantifiers

p if {
    some x, y
    some z
    x = 1; y = 2; z = 3
}

q if {
    some i,
      j
    i = 1; j = 2
}

r if {
    some x in input.xs
    some k, v in input.obj
    some _, item in input.items
    some [a, b] in input.pairs
}

s if {
    every x in input.xs { x > 0 }
    every k, v in input.obj {
        k != v
        v > 0
    }
    every x in input.ys { x > 0; x < 10 }
}
