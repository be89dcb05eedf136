# METADATA
# title: Comments everywhere
# description: kept where they belong
package comments

# Before a rule.
allow if { # on the opening brace
    # inside, before an expression
    input.user == "admin" # trailing an expression

    # after a blank line
    input.ok
    # before the closing brace
} # on the closing brace

# METADATA
# title: documented rule
# METADATA
# title: second block
documented := true

obj := {
    # about a
    "a": 1, # trailing a
    "b": 2,
}

inline := {"a": 1, # awkward
"b": 2}

list := [ # opening
    1,
    2, # two
]

f(x) := y if {
    y := x # assign
}

# Trailing comment at the end of the file.
