package convert

import future.keywords.in
import future.keywords.if
import data.lib

default allow = false

allow {
    input.user in lib.admins
}

names[n] {
    n := input.users[_].name
}

ports[p] = proto {
    some p
    proto := input.ports[p]
}

f(x) = y { y := x + 1 }

r = 1 { input.a } else = 2 { input.b }
