package templates

greeting := $"Hello, {input.name}!"
raw := $`multi {input.a}
line`
nested := $"{count(input.xs)} items, first {input.xs[0]}"
