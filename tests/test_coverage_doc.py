"""`docs/coverage.md` maps every scenario of the peer benchmarks to sregym problems; these checks keep
it from drifting as catalogues grow: the problems it names must exist, each peer id has exactly one
row, the summary counts are the counts of the rows, and SREGym's list is complete (123 ids).

A failure here means the page no longer matches the catalogue: fix the page, not the test.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from sregym.problems import all_problem_ids

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coverage.md"
PEERS = ("SREGym", "AIOpsLab", "ITBench")
STATUSES = ("covered", "partial", "not yet")
COLUMNS = ["peer id", "app", "what it injects", "sregym problem(s)", "status", "note"]
SREGYM_IDS = 123
# An sregym problem id in backticks: app/name-vN (the shape `Problem.id` enforces).
PROBLEM_ID = re.compile(r"`([a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*-v\d+)`")


def cells(line: str) -> list[str]:
    """The cells of one Markdown table row (escaped pipes stay inside their cell)."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip() for p in parts]


def sections(text: str) -> dict[str, list[str]]:
    """Lines under each `##`/`###` heading, keyed by the heading's text."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        heading = re.match(r"^#{2,3} (.+)$", line)
        if heading:
            current = heading.group(1).strip()
            out[current] = []
        else:
            out.setdefault(current, []).append(line)
    return out


def table(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """The header and the body rows of the first table in `lines`."""
    rows = [cells(line) for line in lines if line.startswith("|")]
    assert len(rows) >= 2, "no table"
    return rows[0], rows[2:]


@pytest.fixture(scope="module")
def doc() -> dict[str, list[str]]:
    return sections(PAGE.read_text())


@pytest.fixture(scope="module")
def peer_rows(doc: dict[str, list[str]]) -> dict[str, list[dict[str, str]]]:
    out = {}
    for peer in PEERS:
        header, body = table(doc[peer])
        assert header == COLUMNS, f"{peer}: columns {header}"
        out[peer] = [dict(zip(COLUMNS, row, strict=True)) for row in body]
    return out


def test_every_named_sregym_problem_exists() -> None:
    named = set(PROBLEM_ID.findall(PAGE.read_text()))
    assert named, "the page names no sregym problem"
    unknown = sorted(named - set(all_problem_ids()))
    assert not unknown, f"docs/coverage.md names problems that are not registered: {unknown}"


@pytest.mark.parametrize("peer", PEERS)
def test_rows_are_well_formed_and_unique(peer_rows: dict[str, list[dict[str, str]]], peer: str) -> None:
    rows = peer_rows[peer]
    ids = Counter(r["peer id"] for r in rows)
    assert not [i for i, n in ids.items() if n > 1], f"{peer}: ids listed more than once"
    for row in rows:
        assert row["status"] in STATUSES, row
        assert row["app"] and row["what it injects"], row
        problems = PROBLEM_ID.findall(row["sregym problem(s)"])
        if row["status"] == "not yet":
            assert row["sregym problem(s)"] == "—" and row["note"], f"{row['peer id']}: say why it is not covered"
        else:
            assert problems, f"{row['peer id']}: a {row['status']} row names its sregym problem"
        if row["status"] == "partial":
            assert row["note"], f"{row['peer id']}: say what is missing"


def test_sregym_lists_every_registered_id(peer_rows: dict[str, list[dict[str, str]]]) -> None:
    ids = [r["peer id"] for r in peer_rows["SREGym"]]
    assert len(ids) == SREGYM_IDS
    assert "`faulty_image_correlated`" in ids and "`operator_wrong_operator_image`" in ids


def test_summary_counts_match_the_rows(doc: dict[str, list[str]],
                                      peer_rows: dict[str, list[dict[str, str]]]) -> None:
    header, body = table(doc["By peer"])
    assert header == ["peer", *STATUSES, "total"]
    stated = {row[0]: [int(n) for n in row[1:]] for row in body}
    everything: Counter[str] = Counter()
    for peer in PEERS:
        counts = Counter(r["status"] for r in peer_rows[peer])
        everything.update(counts)
        assert stated[peer] == [*(counts[s] for s in STATUSES), len(peer_rows[peer])], peer
    assert stated["all"] == [*(everything[s] for s in STATUSES), sum(everything.values())]

    header, body = table(doc["By app"])
    assert header == ["app", *STATUSES, "total"]
    by_app: dict[str, Counter[str]] = {}
    for rows in peer_rows.values():
        for r in rows:
            by_app.setdefault(r["app"], Counter())[r["status"]] += 1
    stated_apps = {row[0]: [int(n) for n in row[1:]] for row in body}
    assert stated_apps == {app: [*(c[s] for s in STATUSES), sum(c.values())] for app, c in by_app.items()}
