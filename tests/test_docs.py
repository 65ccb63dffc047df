"""The docs under `docs/` are checked like code: the worked examples are extracted and run, every
relative link resolves inside the repository, and the architecture page names every package.

A failure here means a page no longer matches the code: fix the page (or the code), not the test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sregym.agents import AGENTS
from sregym.cli.main import app
from sregym.problems import PROBLEMS, all_problem_ids, get_problem
from sregym.runner import run

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "src" / "sregym"
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def example(page: str, marker: str) -> str:
    """The ```python block right after `<!-- docs-test: marker -->` on a docs page."""
    text = (DOCS / page).read_text()
    tag = f"<!-- docs-test: {marker} -->"
    assert text.count(tag) == 1, f"{page} must have exactly one {tag}"
    block = re.match(r"\s*```python\n(.*?)\n```", text.split(tag, 1)[1], re.S)
    assert block is not None, f"{tag} in {page} must be followed by a ```python block"
    return block.group(1) + "\n"


def one(pattern: str, text: str) -> str:
    found = re.findall(pattern, text)
    assert len(found) == 1, f"expected one match of {pattern!r}, found {found}"
    return found[0]


# ------------------------------------------------------------------ worked examples
def test_problem_example_passes_check(tmp_path: Path) -> None:
    code = example("problems.md", "problem-example")
    problem_id = one(r'\bid="([^"]+)"', code)
    assert problem_id not in all_problem_ids(), "the example must be a new problem, not a catalogue one"
    assert f"sregym check --problems-dir my_problems {problem_id}" in (DOCS / "problems.md").read_text()
    directory = tmp_path / "my_problems"
    directory.mkdir()
    (directory / "example_problem.py").write_text(code)
    try:
        result = CliRunner().invoke(app, ["check", "--problems-dir", str(directory), problem_id, "-j", "1"])
        assert result.exit_code == 0, result.output
        assert f"PASS {problem_id}" in result.output and "1 passed, 0 failed" in result.output
    finally:
        PROBLEMS._entries.pop(problem_id, None)


def test_agent_example_runs_an_attempt(tmp_path: Path) -> None:
    code = example("agents.md", "agent-example")
    name = one(r'(?m)^\s+name = "([^"]+)"', code)
    page = (DOCS / "agents.md").read_text()
    command = one(rf"sregym run --agents-dir my_agents --agent {re.escape(name)} \\\n\s+--problem (\S+)", page)
    assert "lite" in get_problem(command).tags.suites, "the example should run on a lite problem"
    directory = tmp_path / "my_agents"
    directory.mkdir()
    (directory / "example_agent.py").write_text(code)
    out = tmp_path / "out"
    try:
        run([command], agent=name, agents_dirs=[directory], out_dir=out, progress=False)
    finally:
        AGENTS._entries.pop(name, None)
    (line,) = [json.loads(raw) for raw in (out / "results.jsonl").read_text().splitlines()]
    assert not line["environment_failure"], line["environment_failure_reason"]
    assert line["agent"] == name and line["diagnosis"]["submitted"]
    # The page says the example passes both phases of this problem.
    assert line["diagnosis"]["passed"] and line["mitigation"]["passed"], line
    trajectory = (out / "trajectories" / f"{command}__0.jsonl").read_text().splitlines()
    tools = [json.loads(raw)["tool"] for raw in trajectory]
    assert tools[0] == "kubectl" and "submit_diagnosis" in tools and tools[-1] == "submit_mitigation_done"


# --------------------------------------------------------------------------- links
def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return LINK.findall(text)


PAGES = sorted(DOCS.glob("*.md"))


def test_docs_pages_exist() -> None:
    assert {"architecture.md", "problems.md", "agents.md"} <= {p.name for p in PAGES}


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.name)
def test_relative_links_resolve_inside_the_repository(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


# --------------------------------------------------------------------- architecture
def test_architecture_names_every_package_and_top_level_module() -> None:
    text = (DOCS / "architecture.md").read_text()
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    modules = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(packages) >= 10
    missing = [f"{name}/" for name in packages if f"`{name}/`" not in text]
    missing += [name for name in modules if f"`{name}`" not in text]
    assert not missing, f"docs/architecture.md does not mention: {', '.join(missing)}"


def test_problems_page_names_every_fault_check_and_mechanism() -> None:
    """problems.md lists the parts a problem is built from; a new fault or check must be added."""
    from sregym.faults import FAULTS
    from sregym.oracles.checks import CHECKS
    from sregym.oracles.mechanisms import MECHANISMS

    text = (DOCS / "problems.md").read_text()
    get_problem(all_problem_ids()[0])  # the catalogue adds its own mechanisms
    missing = [f"fault {n}" for n in FAULTS.names() if f"`{n}`" not in text]
    # Checks sregym ships (discovery registers them all); a test's or plug-in's own are not documented here.
    shipped = [e.name for e in CHECKS.entries() if getattr(e.value, "__module__", "").startswith("sregym.")]
    assert "service_serves" in shipped
    missing += [f"check {n}" for n in shipped if f"`{n}`" not in text]
    missing += [f"mechanism {n}" for n in MECHANISMS if f"`{n}`" not in text]
    assert not missing, f"docs/problems.md does not mention: {', '.join(missing)}"
