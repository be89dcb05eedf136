# The service's decision for every request (the middleware's), in the shape
# of OPA's HTTP API authorization example: input.path is the URL path split
# into segments, input.identity who the bearer token says the caller is.
package httpapi.authz

default allow := false

# Everyone signed in reads their own salary.
allow if {
	input.method == "GET"
	input.path == ["finance", "salary", input.identity.user]
}

# Managers read the salaries of the people who report to them.
allow if {
	input.method == "GET"
	some user
	input.path = ["finance", "salary", user]
	user in data.managers[input.identity.user]
}

# Reports and "who am I" have a decision of their own (per route); here
# they only need a caller.
allow if {
	input.path[0] in {"reports", "whoami"}
	input.identity.user
}

# Admins reload the policies.
allow if {
	input.method == "POST"
	input.path == ["admin", "reload"]
	"admin" in input.identity.roles
}
