"""sed's replacement text: `&`, `\\1`, `\\n` and GNU's `\\U`/`\\L`/`\\u`/`\\l`/`\\E` case switches.

The pattern side (POSIX BRE/ERE to Python `re`) is `posix_regex`, shared with grep and awk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sregym.twin.userland.posix_regex import ESCAPES


@dataclass(frozen=True)
class Piece:
    """One part of a replacement: literal text, a group (0 for `&`), or a case switch."""

    text: str = ""
    group: int = -1
    case: str = ""  # "U", "L", "u", "l", "E"


def parse_replacement(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "&":
            pieces.append(Piece(group=0))
            i += 1
        elif ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            i += 2
            if nxt.isdigit():
                pieces.append(Piece(group=int(nxt)))
            elif nxt in ESCAPES:
                pieces.append(Piece(text=ESCAPES[nxt]))
            elif nxt in "ULulE":
                pieces.append(Piece(case=nxt))
            else:
                pieces.append(Piece(text=nxt))
        else:
            pieces.append(Piece(text=ch))
            i += 1
    return pieces


def max_group(pieces: list[Piece]) -> int:
    return max((piece.group for piece in pieces), default=0)


def expand(pieces: list[Piece], match: re.Match[str]) -> str:
    """The replacement text for one match, GNU case conversions applied."""
    out: list[str] = []
    mode, once = "", ""
    for piece in pieces:
        if piece.case:
            if piece.case in "ul":
                once = piece.case
            else:
                mode = "" if piece.case == "E" else piece.case
                once = ""
            continue
        text = piece.text if piece.group < 0 else (match.group(piece.group) or "")
        if mode == "U":
            text = text.upper()
        elif mode == "L":
            text = text.lower()
        if once and text:
            text = (text[0].upper() if once == "u" else text[0].lower()) + text[1:]
            once = ""
        out.append(text)
    return "".join(out)
