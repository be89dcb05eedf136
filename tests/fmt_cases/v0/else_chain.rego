package v0else

level = "high" {
    input.score > 90
} else = "low" {
    true
}

f(x) = 1 { x > 0 }
else = 2
