package k8simagedigests

import data.lib.fixtures

digest := "sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac"

pinned(name) = fixtures.container(name, concat("@", ["registry.example.com/api", digest]))

messages(containers, params) = msgs {
	msgs := {r.msg | r := violation[_]} with input as fixtures.review(fixtures.pod(containers), params)
}

test_pinned_image_passes {
	messages([pinned("api")], {}) == set()
}

test_tagged_image_is_refused {
	messages([fixtures.container("api", "registry.example.com/api:1.4")], {}) == {"container <api> uses an image without a digest: registry.example.com/api:1.4"}
}

test_tag_and_digest_together_pass {
	c := fixtures.container("api", sprintf("registry.example.com/api:1.4@%s", [digest]))
	messages([c], {}) == set()
}

test_short_digest_is_malformed {
	msgs := messages([fixtures.container("api", "api@sha256:abc123")], {})
	msgs == {
		"container <api> uses an image without a digest: api@sha256:abc123",
		"container <api> has a malformed digest (6 hex digits)",
	}
}

test_init_containers_are_checked {
	pod := json.patch(fixtures.pod([pinned("api")]), [{"op": "add", "path": "/spec/initContainers", "value": [fixtures.container("init", "busybox")]}])
	count(violation) == 1 with input as fixtures.review(pod, {})
}

test_exempt_images_by_glob {
	params := {"exemptImages": ["registry.example.com/base/*"]}
	messages([fixtures.container("base", "registry.example.com/base/debian:12")], params) == set()
	count(messages([fixtures.container("other", "registry.example.com/base/sub/debian:12")], params)) == 1
}

test_uppercase_digest_is_refused {
	c := fixtures.container("api", concat("@", ["api", upper(digest)]))
	count(messages([c], {})) == 1
}

test_plain_manifest_input {
	count(violation) == 1 with input as fixtures.deployment([fixtures.container("api", "api:2")])
}
