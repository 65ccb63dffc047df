"""Problem families and their variants (`sregym.problems.family`): the converted families keep
their default problem byte for byte (compared with a fixture captured from `main` before the
conversion), variant ids resolve, are canonical and safe on a command line, every family's space
builds valid problems, the seeded draw is deterministic, and one non-default variant per converted
family passes the check protocol without its id or parameters reaching what the agent can read."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sregym.problems import get_problem
from sregym.problems.family import FAMILIES, expand_with_variants, family_of

FIXTURE = Path(__file__).parent / "fixtures" / "family_defaults_before.json"
CONVERTED = ("hotel-reservation/service-target-port-geo-v1", "hotel-reservation/scaled-to-zero-v1",
             "astronomy-shop/flag-payment-failure-v1", "demo-shop/service-selector-mismatch-v1")
# One non-default variant per converted family, checked end to end.
CHECKED = ("hotel-reservation/service-target-port-geo-v1@service=rate",
           "hotel-reservation/scaled-to-zero-v1@service=geo",
           "astronomy-shop/flag-payment-failure-v1@percent=25",
           "demo-shop/service-selector-mismatch-v1@key=track,value=canary")
SEED = 5


def all_families() -> list[str]:
    FAMILIES.discover()
    return sorted(FAMILIES.names())


def test_converted_defaults_are_unchanged_since_main() -> None:
    before = json.loads(FIXTURE.read_text())
    assert sorted(before) == sorted(CONVERTED)
    for problem_id, dumped in before.items():
        assert get_problem(problem_id).model_dump(mode="json") == dumped, problem_id
        assert family_of(problem_id) is not None and family_of(problem_id).id == problem_id


@pytest.mark.parametrize("family_id", all_families())
def test_every_family_builds_its_default_and_valid_variants(family_id: str) -> None:
    family = FAMILIES.get(family_id)
    default = get_problem(family_id)
    assert family.build(**family.defaults).model_dump(exclude={"card"}) == default.model_dump(exclude={"card"})
    ids = family.variant_ids()
    assert ids and len(set(ids)) == len(ids) and family_id not in ids
    for variant_id in ids:
        variant = get_problem(variant_id)
        assert variant.id == variant_id and variant.app == default.app
        assert variant.faults != default.faults or variant.ground_truth != default.ground_truth
        assert variant.card.startswith(f"Variant of {family_id} with ")
        assert variant.tags.suites == () and variant.tags.sources == ()
        assert variant.tags.layers == default.tags.layers
        assert shlex.quote(variant_id) == variant_id  # nothing to quote on a command line
        assert "/" not in variant_id.split("/", 1)[1] and "\\" not in variant_id  # one file-name component


def test_variant_ids_are_canonical_and_errors_say_why() -> None:
    family = FAMILIES.get("hotel-reservation/service-target-port-geo-v1")
    assert family.parse("hotel-reservation/service-target-port-geo-v1@service=rate,port=8080") == {
        "service": "rate", "port": 8080}
    problem = get_problem("hotel-reservation/service-target-port-geo-v1@service=rate,port=8080")
    assert problem.faults[0].params == {"namespace": "hotel-reservation", "name": "rate", "port": 8084,
                                        "target_port": 8080}
    for bad, why in (("hotel-reservation/service-target-port-geo-v1@port=8080,service=rate", "is spelled"),
                     ("hotel-reservation/service-target-port-geo-v1@service=geo", "default variant"),
                     ("hotel-reservation/service-target-port-geo-v1@service=nope", "not in its space"),
                     ("hotel-reservation/service-target-port-geo-v1@colour=red", "NAME=VALUE"),
                     ("hotel-reservation/coredns-nxdomain-v1@service=rate", "declares no variants")):
        with pytest.raises(KeyError, match=why):
            get_problem(bad)


def test_seeded_draw_is_deterministic_and_keeps_plain_ids() -> None:
    ids = ["demo-shop/bad-image-tag-v1", "hotel-reservation/scaled-to-zero-v1"]
    first = expand_with_variants(ids, 2, seed=3)
    assert first == expand_with_variants(ids, 2, seed=3)
    assert first[:2] == ["demo-shop/bad-image-tag-v1", "hotel-reservation/scaled-to-zero-v1"]
    assert len(first) == 4 and all(i.startswith("hotel-reservation/scaled-to-zero-v1@service=") for i in first[2:])
    draws = {tuple(expand_with_variants(ids, 2, seed=s)) for s in range(8)}
    assert len(draws) > 1  # the seed matters
    everything = expand_with_variants(ids, 100, seed=0)
    assert len(everything) == 2 + len(FAMILIES.get("hotel-reservation/scaled-to-zero-v1").variant_ids())


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[2])
from support.problem_batch import agent_view
from sregym.problems import get_problem
from sregym.problems.check import check_problem
out = {}
for pid in sys.argv[4:]:
    report = check_problem(get_problem(pid), seed=int(sys.argv[3]), window_probe=agent_view)
    out[pid] = {"check": [[s.name, s.passed, s.detail] for s in report.steps], "isolation": report.after_window}
open(sys.argv[1], "w").write(json.dumps(out))
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The check protocol of `CHECKED` and the agent's view at the end of its noop window, in one
    single-threaded child (so each problem's runs fork from one warm start)."""
    out = tmp_path_factory.mktemp("variants") / "out.json"
    tests_dir = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(out), tests_dir, str(SEED), *CHECKED],
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("variant_id", CHECKED)
def test_a_variant_of_each_converted_family_passes_check_and_stays_hidden(checked: dict[str, Any],
                                                                        variant_id: str) -> None:
    result = checked[variant_id]
    failed = [step for step in result["check"] if not step[1]]
    assert not failed, failed
    isolation = result["isolation"]
    # Neither the variant id nor its name part (with the parameters) is anywhere the agent reads.
    assert isolation["found"] == [], isolation["found"]
    assert "chaos-mesh" not in isolation["namespaces"]
