package plain
allow { input.ok }
deny[msg] {
	not input.ok
	msg := "not ok"
}
