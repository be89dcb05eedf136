package grouping

a := 1
b := 2

c := 3
d if input.d
e if {
    input.e
    input.f
}
f := 4
g contains 1
g contains 2
h := 5 if input.h else := 6
i := 7
