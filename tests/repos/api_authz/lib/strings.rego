# String helpers shared by the authorization policies.
package lib.strings

import rego.v1

# The non-empty segments of a URL path: "/api//v1/orders/" -> ["api", "v1", "orders"].
segments(path) := [s | some s in split(path, "/"); s != ""]

# A path with repeated slashes collapsed and no trailing slash; "" and "/" become "/".
normalize_path(path) := "/" if {
	segments(path) == []
} else := concat("/", array.concat([""], segments(path)))

# Does `s` start with one of `prefixes`?
any_prefix(s, prefixes) if {
	some prefix in prefixes
	startswith(s, prefix)
}

# Keep only the first `n` characters of a secret, for logs.
redact(s, n) := sprintf("%s...", [substring(s, 0, n)]) if count(s) > n

redact(s, n) := s if count(s) <= n

# Header names are case-insensitive: look them up in lower case.
lower_keys(obj) := {lower(k): v | some k, v in obj}

# "a b  c" -> {"a", "b", "c"}
words(s) := {w | some w in split(s, " "); w != ""}
