package x

a.b.c := true
