package strings

raw := `C:\path\to`
raw_multi := `line one
line two`
escaped := "tab\there \u00e9 \"quoted\""
unicode := "héllo wörld ✓"
keys := input["not"]
dotted := input.not
needs_brackets := input["a-b"]["c d"].e
simple := input["name"]
num_keys := input.items[0]
