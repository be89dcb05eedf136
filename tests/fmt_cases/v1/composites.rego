package composites

one_line := [1, 2, 3]
spread := [1, 2,
    3, 4]
first_on_next_line := [
    1, 2, 3]
objects := {"a": 1, "b": {"c": [1, 2]}}
obj_lines := {
    "a": 1,
    "b": 2
}
set_lines := {
    "x",
    "y",
}
empty_array := []
empty_object := {}
empty_set := set()
nested := {"list": [
    1,
    2,
]}
call_args := concat(",",
    ["a", "b"])
long_call := sprintf("%s %s", [
    "a",
    "b",
])
dupes := {1, 1, 2}
