package ops

p if {
    x := 1+2*3
    y := (1+2)*3
    z := 10-(4-2)
    z2 := (10-4)-2
    a := x/y%2
    b := -x
    plus(x, y, c)
    x+y == 5
    x != y
    x >= y; x <= y; x > y; x < y
    s := {1} | {2}
    t := {1, 2} & {2}
    equal(x, y)
    count(input.l) - 1 > 0
    k := {1,2} - {1}
}

q if {
    1 in input.xs
    "a", 1 in input.obj
    not 2 in input.xs
    r := 3 in input.xs
    m := (1, 2 in [1, 2])
}
