# Which tickets a user may see.
#
# Evaluated two ways by the app: as a data filter for the list endpoint
# (input.tickets, the row, and input.users, its assignee's row, are unknown;
# what is left becomes the WHERE clause), and for one ticket with its rows
# as input.tickets and input.users.
package tickets

# Admins see every ticket of their tenant.
include if {
	input.user.role == "admin"
	input.tickets.tenant == input.user.tenant
}

# Everyone sees the tickets they wrote or are assigned to, in their tenant.
include if {
	input.tickets.tenant == input.user.tenant
	input.tickets.author == input.user.name
}

include if {
	input.tickets.tenant == input.user.tenant
	input.tickets.assignee == input.user.name
}

# Support agents see the unassigned, not confidential tickets still to be
# handled, and the urgent ones, in their tenant.
include if {
	input.user.role == "support"
	input.tickets.tenant == input.user.tenant
	input.tickets.assignee == null
	input.tickets.status in data.tickets.open_statuses
	input.tickets.confidential == false
}

include if {
	input.user.role == "support"
	input.tickets.tenant == input.user.tenant
	input.tickets.priority >= 3
	input.tickets.confidential == false
}

# Team leads see the tickets assigned to members of their team (a join:
# input.users is the assignee's row of the users table).
include if {
	input.user.role == "lead"
	input.tickets.tenant == input.user.tenant
	input.tickets.assignee == input.users.name
	input.users.team == input.user.team
}

open_statuses := {"open", "triage"}
