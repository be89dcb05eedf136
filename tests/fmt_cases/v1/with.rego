package withs

test_one if {
    allow   with input as {"user": "a"}
}

test_many if {
    allow with input as {"user": "a"}
        with data.roles as {}
    allow
        with input as {}
        with data.x as 1
    allow with input.a as 1 with input.b as 2
}

test_call if {
    f(
        1,
        2
    ) with input as {}
}

f(a, b) := a + b
allow if input.user
