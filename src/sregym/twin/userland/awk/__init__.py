"""`awk` inside a container: a small awk interpreter (lexer, parser, interpreter, number and
printf formatting) behind the `awk`, `mawk`, `gawk` exec commands.

Debian's default `awk` is mawk 1.3.4 (20200120): its messages (`mawk: line 1: syntax error at
or near }`, exit 2), its number output (integral values within a C int print as integers, others
through OFMT/CONVFMT `%.6g`), its `substr` rounding and its random generator (glibc `random()`,
seeded from the twin's streams, never from the wall clock). BusyBox images run BusyBox awk, with
BusyBox's message shapes. Commands only read and write the container's files.
"""
