"""Progress of long commands (`check`, `snapshot dataset`, `snapshot run`) and their result tables.

A command that works for minutes must never be silent, whether it writes to a terminal or to a
CI log or `| tee`: every finished item (a problem, a task, a repeat) prints one plain line the
moment it finishes — id, seed, verdict, wall time — flushed, so a pipe shows it at once. On a
terminal a transient bar (on stderr) also shows what is still running and for how long. The
final table fits the terminal, or 80 columns when there is none, so no line wraps in a log.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any

import typer


def interactive() -> bool:
    """Both streams on a terminal: only then is a live bar more help than noise."""
    return sys.stdout.isatty() and sys.stderr.isatty()


class ItemProgress:
    """`done(line)` per finished item: the line goes to stdout at once; on a terminal a bar on
    stderr counts the items and the elapsed time (`total` 0: the count is not known, lines only)."""

    def __init__(self, total: int, label: str) -> None:
        self.total = total
        self.label = label
        self.finished = 0
        self.started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ItemProgress:
        if interactive() and self.total > 0:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def done(self, line: str) -> None:
        self.finished += 1
        typer.echo(line)  # click.echo flushes: a pipe sees the line now, not at exit
        if self._bar is not None:
            self._bar.update(self._task, completed=self.finished)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()


def results_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]], *,
                  numeric: Iterable[int] = ()) -> None:
    """A table on stdout no wider than the terminal (80 columns without one): a long cell folds
    inside its column instead of wrapping the line. Columns in `numeric` are right-aligned and
    never broken."""
    from rich import box
    from rich.table import Table

    right = set(numeric)
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for i, name in enumerate(columns):
        table.add_column(name, justify="right" if i in right else "left", overflow="fold", no_wrap=i in right)
    for row in rows:
        table.add_row(*row)
    print_fitted(table)


def print_fitted(*renderables: Any) -> None:
    """Print through rich at the terminal's width (80 without a terminal), trailing blanks cut so
    a log holds no padding."""
    from rich.console import Console

    console = Console(highlight=False)
    with console.capture() as captured:
        for item in renderables:
            console.print(item, markup=False)
    for line in captured.get().splitlines():
        typer.echo(line.rstrip())


def seconds(value: float) -> str:
    return f"{value:.1f}s"


__all__ = ["ItemProgress", "interactive", "print_fitted", "results_table", "seconds"]
