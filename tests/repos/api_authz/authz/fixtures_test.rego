# Tokens and requests shared by the authz tests.
package authz_test

import rego.v1

# HS256 tokens signed with the secret of config/jwt/data.json. All are valid
# from 2025-03-01 to 2030-01-01 unless their name says otherwise.
admin_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiYWxpY2UiLCJuYW1lIjoiQWxpY2UgQWRtaW4iLCJyb2xlcyI6WyJhZG1pbiJdLCJ0ZW5hbnQiOiJhY21lIn0.lBDGsK2qu-FvViStzGq--UULl0zGtQ1HQXCHxqNelFM"

editor_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiYm9iIiwicm9sZXMiOlsiZWRpdG9yIl0sInRlbmFudCI6ImFjbWUifQ.dqYwKuB4bx-bXGr2ux1wAP-TYbHYwQTve0fcuck_tCc"

viewer_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiY2Fyb2wiLCJyb2xlcyI6WyJ2aWV3ZXIiXSwidGVuYW50IjoiZ2xvYmV4In0.bxXZXgluoaa-DMvwYS4TBnziUAmDTQOxJUQOmCUa9WY"

auditor_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiZGF2ZSIsInJvbGVzIjpbImF1ZGl0b3IiLCJ2aWV3ZXIiXSwidGVuYW50IjoiYWNtZSJ9._TqNb4uYJldiX3q2S1NTBVwFC2p5migBCWQb6XlA-pY"

no_role_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiZXJpbiIsInJvbGVzIjpbXSwidGVuYW50IjoiYWNtZSJ9.YVvAr3THyeeStB9Qq6NroXUPB0dqLVHY6hy-fYTLq6k"

# Expired on 2025-03-02.
expired_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTc0MDg3MzYwMCwic3ViIjoiYm9iIiwicm9sZXMiOlsiZWRpdG9yIl0sInRlbmFudCI6ImFjbWUifQ.BCRWEK0NlRq2poN5Zg_chm-ypJTw9ddqsakQdpIm27s"

# Not valid before 2029-12-26.
not_yet_valid_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE4OTMwMDAwMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiYm9iIiwicm9sZXMiOlsiZWRpdG9yIl0sInRlbmFudCI6ImFjbWUifQ.lw_SFXE73Y1c90BJTqukNW9TSZB65b-jUpa1_ezb9rU"

wrong_issuer_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2V2aWwuZXhhbXBsZS5uZXQiLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoibWFsbG9yeSIsInJvbGVzIjpbImFkbWluIl0sInRlbmFudCI6ImFjbWUifQ.KAdJARUo4cvujl69V0mEyTyz6vT_Io3Ylbz7zDyXFHE"

wrong_audience_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJiaWxsaW5nLWFwaSIsImlhdCI6MTc0MDc4NzIwMCwibmJmIjoxNzQwNzg3MjAwLCJleHAiOjE4OTM0NTYwMDAsInN1YiI6ImJvYiIsInJvbGVzIjpbImVkaXRvciJdLCJ0ZW5hbnQiOiJhY21lIn0.dEAPmtn_XQhgoKzMU3zyuKE_cqnI7mtJVUrmcCP87ys"

# The admin token's claims, signed with another key.
forged_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoiYWxpY2UiLCJuYW1lIjoiQWxpY2UgQWRtaW4iLCJyb2xlcyI6WyJhZG1pbiJdLCJ0ZW5hbnQiOiJhY21lIn0.IZvoM_Pvm7v_P8o2jO5OKI4S3XCmNSaQnvD_ml50vxo"

# A client-credentials token: scopes "reports:export orders:read".
service_token := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20iLCJhdWQiOiJvcmRlcnMtYXBpIiwiaWF0IjoxNzQwNzg3MjAwLCJuYmYiOjE3NDA3ODcyMDAsImV4cCI6MTg5MzQ1NjAwMCwic3ViIjoic3ZjLXJlcG9ydGluZyIsInJvbGVzIjpbInZpZXdlciJdLCJ0ZW5hbnQiOiJhY21lIiwiY2xpZW50X3R5cGUiOiJzZXJ2aWNlIiwic2NvcGUiOiJyZXBvcnRzOmV4cG9ydCBvcmRlcnM6cmVhZCJ9.jmYf5rG54AoezyF1YWaFpJRw5AHe__AWE-nz2nJx5Zw"

# A Wednesday morning.
request_time := "2025-03-12T10:30:00Z"

api_request(method, path, tok) := {"request": {
	"method": method,
	"path": path,
	"time": request_time,
	"source_ip": "10.20.30.40",
	"headers": {
		"Authorization": sprintf("Bearer %s", [tok]),
		"X-Request-Id": "7f3c2a",
	},
}}

anonymous_request(method, path) := {"request": {
	"method": method,
	"path": path,
	"time": request_time,
	"source_ip": "10.20.30.40",
	"headers": {"Accept": "application/json"},
}}

# The same request at another time, or from another address.
at(req, ts) := object.union(req, {"request": {"time": ts}})

from_ip(req, ip) := object.union(req, {"request": {"source_ip": ip}})
