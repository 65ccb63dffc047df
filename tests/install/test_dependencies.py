"""The base install is honest: every module of the package imports with only the declared base
dependencies, and every third-party import anywhere in the source (also inside functions, where
an import only fails when that code path runs) is a base dependency or goes through
`sregym.extras.require()`.

The first check runs in a subprocess whose import system refuses every installed top-level
package that is neither the standard library nor in the base dependency closure of `sregym` (read
from the installed metadata), so a module that needs an extra at import time fails it exactly as
it would in a fresh `pip install -e .`. The second check reads the source (AST), which also sees
the imports that no module-level import reaches — the way `httpx` once slipped through.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import sregym
from sregym.extras import EXTRAS

SRC = Path(sregym.__file__).resolve().parent
# Modules documented as needing an extra even to import; nothing imports them eagerly (the
# Gymnasium class must subclass `gymnasium.Env`; `sregym.gym` registers it by a string entry point).
NEEDS_EXTRA_TO_IMPORT: dict[str, str] = {"sregym.gym.env": "gym"}


def _requirement_name(req: str) -> str | None:
    """The distribution a requirement string names, or None when it only applies with an extra."""
    name, _, marker = req.partition(";")
    if "extra" in marker:
        return None
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", name)
    return match.group(1) if match else None


def _normal(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def base_closure() -> set[str]:
    """Normalised names of the distributions a plain `pip install sregym` brings in."""
    seen: set[str] = set()
    todo = ["sregym"]
    while todo:
        dist = _normal(todo.pop())
        if dist in seen:
            continue
        seen.add(dist)
        try:
            requires = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            continue
        todo.extend(n for n in (_requirement_name(r) for r in requires) if n)
    return seen


def allowed_top_level() -> tuple[set[str], set[str]]:
    """(import names the base install provides, import names installed here but not in it)."""
    closure = base_closure()
    allowed, blocked = set(), set()
    for top, dists in metadata.packages_distributions().items():
        (allowed if any(_normal(d) in closure for d in dists) else blocked).add(top)
    allowed |= set(sys.stdlib_module_names) | {"sregym"}
    return allowed, blocked - allowed


def test_the_declared_extras_match_the_extras_table() -> None:
    declared = {_normal(e) for e in (metadata.metadata("sregym").get_all("Provides-Extra") or [])}
    assert set(EXTRAS) <= declared, "every extra in sregym.extras.EXTRAS must be declared in pyproject.toml"
    assert {"llm", "mcp", "kube", "all"} <= declared
    _, blocked = allowed_top_level()
    for extra, modules in EXTRAS.items():
        for module in modules:
            assert module in blocked, f"{module} (extra {extra}) is in the base install: drop it from the extra"


BLOCKER = r'''
import importlib, importlib.abc, json, pkgutil, sys, traceback

blocked = set(json.loads(sys.argv[1]))


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not a base dependency)", name=name)
        return None


sys.meta_path.insert(0, Refuse())
import sregym

failures = {}
for info in pkgutil.walk_packages(sregym.__path__, "sregym."):
    try:
        importlib.import_module(info.name)
    except BaseException as exc:
        failures[info.name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
'''


def test_every_module_imports_with_only_the_base_dependencies() -> None:
    _, blocked = allowed_top_level()
    proc = subprocess.run([sys.executable, "-c", BLOCKER, json.dumps(sorted(blocked))], capture_output=True,
                          text=True, timeout=300, cwd=str(SRC.parent))
    assert proc.returncode == 0, proc.stderr
    failures = json.loads(proc.stdout.strip().splitlines()[-1])
    unexpected = {m: e for m, e in failures.items() if m not in NEEDS_EXTRA_TO_IMPORT}
    assert not unexpected, unexpected


def test_the_blocker_would_catch_a_module_that_needs_an_extra() -> None:
    """The check above can fail: with `openai` blocked, importing it at module level fails."""
    probe = BLOCKER.replace("import sregym\n", "import sregym\nimport openai\n", 1)
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(["openai"])], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0 and "not a base dependency" in proc.stderr


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module.split(".")[0], node.lineno))
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def test_every_import_in_the_source_is_declared() -> None:
    """Also imports inside functions: a base dependency, or an extra's module in a file that asks
    for it through `require()` first (so a missing extra is one line, not a traceback)."""
    allowed, _ = allowed_top_level()
    extra_modules = {m for modules in EXTRAS.values() for m in modules}
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        tree = ast.parse(text)
        typing_only = _type_checking_lines(tree)
        for top, line in _imports(tree):
            if top in allowed or line in typing_only:
                continue
            where = f"{path.relative_to(SRC.parent)}:{line}"
            if top in extra_modules:
                if f'require("{top}"' not in text:
                    problems.append(f"{where}: imports {top} (an extra) without sregym.extras.require()")
            else:
                problems.append(f"{where}: imports {top}, which is not a base dependency")
    assert not problems, "\n".join(problems)
