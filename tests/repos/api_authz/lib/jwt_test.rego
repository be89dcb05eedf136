package lib.jwt_test

import data.authz_test.admin_token
import data.authz_test.forged_token
import data.lib.jwt
import rego.v1

# 2025-03-12T10:30:00Z
now := 1741775400000000000

config := data.config.jwt

test_well_formed_tokens if {
	jwt.well_formed(admin_token)
	not jwt.well_formed("abc.def")
	not jwt.well_formed("a.b.c.d")
	not jwt.well_formed("a b.c.d")
}

test_bearer_needs_the_scheme if {
	jwt.bearer({"authorization": "Bearer abc.def.ghi"}) == "abc.def.ghi"
	jwt.bearer({"authorization": "BEARER abc.def.ghi"}) == "abc.def.ghi"
	not jwt.bearer({"authorization": "Token abc.def.ghi"})
	not jwt.bearer({"authorization": "Bearer"})
	not jwt.bearer({})
}

test_verified_claims_of_a_valid_token if {
	claims := jwt.verified_claims(admin_token, config, now)
	claims.sub == "alice"
	claims.tenant == "acme"
}

test_a_wrong_secret_fails_verification if {
	not jwt.verified_claims(admin_token, object.union(config, {"secret": "guess"}), now)
	not jwt.verified_claims(forged_token, config, now)
}

test_a_token_is_invalid_after_it_expires if {
	# exp is 2030-01-01T00:00:00Z
	not jwt.verified_claims(admin_token, config, time.parse_rfc3339_ns("2030-01-01T00:00:01Z"))
}

test_unverified_reads_any_token if {
	info := jwt.unverified(forged_token)
	info.header == {"alg": "HS256", "typ": "JWT"}
	info.claims.sub == "alice"
	jwt.algorithm(forged_token) == "HS256"
}

test_scopes if {
	jwt.scopes({"scope": "a:read  b:write"}) == {"a:read", "b:write"}
	jwt.scopes({}) == set()
}
