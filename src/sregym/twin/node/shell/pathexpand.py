"""Pathname expansion (globbing): `ls /var/log/*.log`, `rm -rf /tmp/*`, `for f in /data/*`.

A word's *pattern* is its expanded text with every quoted character escaped by a backslash, so
`"*"` and `\\*` stay literal while `*` from the script (or an unquoted `$x`) is active. Patterns
are matched one path component at a time against the directories a `lister` reports, as sh's
`expmeta` and glibc's `glob` do:

- `*` and `?` never match a leading `.` (hidden files need a literal `.`); dash and BusyBox ash
  list `.` and `..` for `.*`, bash 5.2 does not (its default `globskipdots`);
- a component that does not match, or a directory that does not exist, drops the candidate; a
  word with no match stays as written (quote removal only), as in sh and bash without `nullglob`;
- a literal component after a magic one must exist; a trailing `/` keeps directories only;
- results are sorted bytewise (the C collation of the images' default locale).
"""

from __future__ import annotations

from collections.abc import Callable

from sregym.twin.node.shell.globbing import glob_match
from sregym.twin.node.shell.lookup import absolute

GLOB_SPECIAL = frozenset("*?[]\\")
# str.translate runs in C: expansions of multi-megabyte values (`x="${x}a"` in a loop) stay cheap.
_ESCAPES = str.maketrans({c: "\\" + c for c in GLOB_SPECIAL})

# `lister(absolute_dir)`: the names in a directory (symlinks followed), None if not a directory.
Lister = Callable[[str], "list[str] | None"]
# `kind(absolute_path)`: "dir", "file" (anything else that exists) or None.
Kind = Callable[[str], "str | None"]


def escape(text: str) -> str:
    """`text` as a pattern that matches only itself (quoted text)."""
    return text.translate(_ESCAPES)


def unescape(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            i += 1
        out.append(pattern[i])
        i += 1
    return "".join(out)


def has_magic(pattern: str) -> bool:
    """Whether an unescaped `*`, `?` or a `[` with a closing `]` is in `pattern`."""
    if "*" not in pattern and "?" not in pattern and "[" not in pattern:
        return False  # the common case, decided in C however long the word is
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c in "*?":
            return True
        if c == "[" and "]" in pattern[i + 2:]:
            return True
        i += 1
    return False


def expand_path(pattern: str, cwd: str, lister: Lister, kind: Kind, *, dot_entries: bool) -> list[str]:
    """The sorted paths `pattern` matches (empty when none)."""
    components = pattern.split("/")
    candidates: list[list[str]] = [[]]
    for component in components:
        if not has_magic(component):
            literal = unescape(component)
            candidates = [[*parts, literal] for parts in candidates]
            continue
        hidden = component.startswith(".") or component.startswith("\\.")
        found: list[list[str]] = []
        for parts in candidates:
            directory = absolute("/".join(parts) if parts != [""] else "/", cwd) if parts else cwd
            names = lister(directory)
            if names is None:
                continue
            if hidden and dot_entries:
                names = [".", "..", *names]
            for name in names:
                if (hidden or not name.startswith(".")) and glob_match(component, name):
                    found.append([*parts, name])
        candidates = found
        if not candidates:
            return []
    out = []
    trailing = pattern.endswith("/")
    for parts in candidates:
        shown = "/".join(parts)
        what = kind(absolute(shown, cwd))
        if what is None or (trailing and what != "dir"):
            continue
        out.append(shown)
    return sorted(out)
