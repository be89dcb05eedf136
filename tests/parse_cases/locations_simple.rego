package x

p = 1
