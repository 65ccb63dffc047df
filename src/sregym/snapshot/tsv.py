"""TSV files of a snapshot: one header row, tab-separated values, one record per line.

Values are escaped like ClickHouse's `TabSeparated` format (what ITBench's recorders dump), so a
record never spans lines and `grep`/`cut`/`awk` work on it: backslash → `\\\\`, tab → `\\t`,
newline → `\\n`, carriage return → `\\r`. `read_tsv` undoes exactly that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "'": "'"}


def escape(value: object) -> str:
    text = "" if value is None else str(value)
    if not any(c in text for c in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(c, c) for c in text)


def unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_UNESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def format_tsv(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The file text: header, then rows in the order given (callers sort them)."""
    lines = ["\t".join(columns)]
    width = len(columns)
    for row in rows:
        if len(row) != width:
            raise ValueError(f"row has {len(row)} values, expected {width} ({', '.join(columns)})")
        lines.append("\t".join(escape(v) for v in row))
    return "\n".join(lines) + "\n"


def write_tsv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(format_tsv(columns, rows), encoding="utf-8", newline="\n")
    return path


def read_tsv(path: str | Path) -> list[dict[str, str]]:
    """Every record of a snapshot TSV as {column: value}, values unescaped."""
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return []
    columns = lines[0].split("\t")
    out: list[dict[str, str]] = []
    for number, line in enumerate(lines[1:], start=2):
        values = line.split("\t")
        if len(values) != len(columns):
            raise ValueError(f"{path}:{number}: {len(values)} values, expected {len(columns)}")
        out.append({c: unescape(v) for c, v in zip(columns, values, strict=True)})
    return out


__all__ = ["escape", "format_tsv", "read_tsv", "unescape", "write_tsv"]
