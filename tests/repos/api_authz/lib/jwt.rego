# Bearer tokens: extraction from headers and HS256 verification.
package lib.jwt

import rego.v1

# A compact JWS: three base64url parts separated by dots. Checked before
# decoding, since decoding a malformed token is an error.
well_formed(token) if regex.match(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`, token)

# The token of an "Authorization: Bearer <token>" header. `headers` must
# have lower-case names.
bearer(headers) := token if {
	parts := split(headers.authorization, " ")
	count(parts) == 2
	lower(parts[0]) == "bearer"
	token := parts[1]
}

# The claims of `token` when its signature, issuer, audience and validity
# window check out at `now_ns`; undefined otherwise.
verified_claims(token, cfg, now_ns) := claims if {
	well_formed(token)
	[valid, _, claims] := io.jwt.decode_verify(token, {
		"secret": cfg.secret,
		"iss": cfg.issuer,
		"aud": cfg.audience,
		"time": now_ns,
	})
	valid
}

# Header and claims without any check: for audit logs only.
unverified(token) := {"header": header, "claims": claims} if {
	well_formed(token)
	[header, claims, _] := io.jwt.decode(token)
}

algorithm(token) := unverified(token).header.alg

# Space-separated OAuth scopes of a claims object.
scopes(claims) := {s | some s in split(object.get(claims, "scope", ""), " "); s != ""}
