package v0pol

deny[msg] {
	input.kind == "Pod"
	not input.labels.team
	msg := "pods need a team label"
}
