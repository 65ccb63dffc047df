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


# How each peer's table spells an id, and how a problem's `tags.sources` spells it: AIOpsLab's
# table lists one row per task type (`<scenario>-detection-1`), a source names the scenario once
# (`aiopslab:<scenario>-1`), since one sregym problem grades every task type.
SOURCE_PREFIX = {"SREGym": "sregym:", "AIOpsLab": "aiopslab:", "ITBench": "itbench:"}
AIOPSLAB_TASK = re.compile(r"^(?P<scenario>.+)-(?:detection|localization|analysis|mitigation)-(?P<n>\d+)$")
# Sources that name a peer scenario without a row: SREGym defines it but does not register it, so
# it is not among the 123 ids (the metastable families section names it).
UNLISTED_SOURCES = frozenset({"sregym:cache_flush_capacity_degradation"})


def source_of(peer: str, peer_id: str) -> str:
    """The `tags.sources` spelling of a row's peer id."""
    bare = peer_id.strip("`")
    if peer == "AIOpsLab":
        task = AIOPSLAB_TASK.match(bare)
        if task:
            bare = f"{task['scenario']}-{task['n']}"
    return SOURCE_PREFIX[peer] + bare


def tagged_sources() -> dict[str, set[str]]:
    """Every peer source any registered problem names, with the problems that name it."""
    from sregym.problems import get_problem

    out: dict[str, set[str]] = {}
    for problem_id in all_problem_ids():
        for source in get_problem(problem_id).tags.sources:
            if source.startswith(tuple(SOURCE_PREFIX.values())):
                out.setdefault(source, set()).add(problem_id)
    return out


@pytest.mark.parametrize("peer", PEERS)
def test_rows_and_problem_sources_agree(peer_rows: dict[str, list[dict[str, str]]], peer: str) -> None:
    """A covered or partial row names exactly the problems whose `sources` carry its id, and a
    `not yet` row's id is in no problem's `sources`: the table and the tags cannot drift apart."""
    tagged = tagged_sources()
    wrong = []
    for row in peer_rows[peer]:
        source = source_of(peer, row["peer id"])
        named = set(PROBLEM_ID.findall(row["sregym problem(s)"]))
        carriers = tagged.get(source, set())
        if named != carriers:
            wrong.append(f"{row['peer id']} ({row['status']}): row names {sorted(named)}, "
                         f"problems tagged {source}: {sorted(carriers)}")
    assert not wrong, f"{peer}: rows and problem sources disagree:\n" + "\n".join(wrong)


def test_every_problem_source_has_a_row(peer_rows: dict[str, list[dict[str, str]]]) -> None:
    rows = {source_of(peer, r["peer id"]) for peer in PEERS for r in peer_rows[peer]}
    orphans = sorted(set(tagged_sources()) - rows - UNLISTED_SOURCES)
    assert not orphans, f"problems name peer scenarios that have no row in docs/coverage.md: {orphans}"


def test_source_spelling_matches_the_rows() -> None:
    assert source_of("AIOpsLab", "`revoke_auth_mongodb-mitigation-2`") == "aiopslab:revoke_auth_mongodb-2"
    assert source_of("AIOpsLab", "`noop_detection_hotel_reservation-1`") == "aiopslab:noop_detection_hotel_reservation-1"
    assert source_of("ITBench", "`17`") == "itbench:17"
