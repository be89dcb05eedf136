package v0rules

import future.keywords.in

default allow = false

allow {
    input.user == "admin"
}

allow = true {
    input.user in data.admins
}

users[name] {
    some name in input.names
}

roles[name] = role {
    role := data.roles[name]
}

deny[msg] { msg := "no" } { msg := "never" }

max_size = 10
double(x) = y { y := x * 2 }
const { true }
