# Licence header, kept above the package.


# Second paragraph of the header.
package   acme.authz["v-2"]

# Imports in one group are sorted; a blank line starts a new group.
import data.users
import input.request   as req    # the request
import data.roles
import data.acme.lib
import rego.v1

import future.keywords.in
import data.acme.helpers as h

allow if req.user in data.users
