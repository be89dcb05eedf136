package lib.strings_test

import data.lib.strings as s
import rego.v1

test_normalize_path if {
	s.normalize_path("/api/v1/orders") == "/api/v1/orders"
	s.normalize_path("//api//v1/orders/") == "/api/v1/orders"
	s.normalize_path("api") == "/api"
	s.normalize_path("/") == "/"
	s.normalize_path("") == "/"
}

test_segments if {
	s.segments("/a//b/c/") == ["a", "b", "c"]
}

test_any_prefix if {
	s.any_prefix("/api/v1/orders", ["/health", "/api/"])
	not s.any_prefix("/metrics", ["/health", "/api/"])
}

test_redact if {
	s.redact("supersecretvalue", 5) == "super..."
	s.redact("tiny", 5) == "tiny"
}

test_lower_keys if {
	s.lower_keys({"Content-Type": "text/plain", "X-Id": 1}) == {"content-type": "text/plain", "x-id": 1}
}

test_words if {
	s.words(" read  write ") == {"read", "write"}
}
