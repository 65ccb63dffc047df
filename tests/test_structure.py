"""The shape of the package, read from its source: which module imports which.

The import graph is built from the AST of every module under src/sregym, counting imports at
module level and inside functions alike (a function-level import that dodges a circle is still a
circle), but not those under `if TYPE_CHECKING:` (they never run). Three rules hold:

- the twin's modules import each other without circles, so each can be read, tested and replaced
  from the bottom up;
- nothing in the twin outside `sregym.twin.api` imports `sregym.twin.api`: the API servers are the
  top of the twin, the domain policy they serve (RBAC visibility, the log index, exec resolution,
  durations) lives below them;
- an underscore name is private to its module: no module imports another's `_name`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: dict[str, int] = field(default_factory=dict)  # imported module -> first line
    private: list[tuple[str, str, int]] = field(default_factory=list)  # (module, name, line)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except in `if TYPE_CHECKING:` bodies."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


@cache
def graph() -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((SRC / "sregym").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, path, is_package)

    def owner(dotted: str) -> str | None:
        """The module a dotted name lives in (the longest known prefix)."""
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for mod in modules.values():
        package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
        for node in _import_nodes(ast.parse(mod.path.read_text())):
            if isinstance(node, ast.Import):
                targets = [(owner(alias.name), None) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                targets = []
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    # `from pkg import submodule` imports the submodule; otherwise a name of `base`.
                    targets.append((full, None) if full in modules else (owner(base), alias.name))
            for target, imported_name in targets:
                if target is None or target == mod.name:
                    continue
                mod.imports.setdefault(target, node.lineno)
                if imported_name and imported_name.startswith("_") and not imported_name.startswith("__"):
                    mod.private.append((target, imported_name, node.lineno))
    return modules


def cycles(modules: dict[str, Module], prefix: str) -> list[list[str]]:
    """Strongly connected components (more than one module) of the graph among `prefix` modules."""
    names = [name for name in modules if name == prefix or name.startswith(prefix + ".")]
    inside = set(names)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative Tarjan
        work = [(start, iter(sorted(t for t in modules[start].imports if t in inside)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(t for t in modules[child].imports if t in inside))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(names):
        if name not in index:
            visit(name)
    return sorted(found)


def _describe(component: list[str]) -> str:
    modules = graph()
    members = set(component)
    edges = [f"{name} -> {target} (line {line})" for name in component
             for target, line in sorted(modules[name].imports.items()) if target in members]
    return "\n    ".join(edges)


def test_the_graph_counts_function_level_imports_and_finds_circles() -> None:
    """What the rules below rely on: a function-level import counts, a TYPE_CHECKING one does not,
    and a circle through a function-level import is found."""
    tree = ast.parse("import a\nif TYPE_CHECKING:\n    import b\ndef f():\n    from c import d\n")
    assert sorted(ast.unparse(node) for node in _import_nodes(tree)) == ["from c import d", "import a"]
    fake = {name: Module(name, Path(name), False) for name in ("p.x", "p.y", "p.z")}
    fake["p.x"].imports = {"p.y": 1}
    fake["p.y"].imports = {"p.x": 9, "p.z": 2}
    assert cycles(fake, "p") == [["p.x", "p.y"]]
    assert "sregym.twin.machinery.store" in graph()["sregym.twin.twin"].imports


def test_twin_modules_import_each_other_without_circles() -> None:
    found = cycles(graph(), "sregym.twin")
    assert not found, "import circles in the twin:\n" + "\n".join(
        f"  {', '.join(component)}:\n    {_describe(component)}" for component in found)


def test_no_import_circles_anywhere_in_the_package() -> None:
    found = cycles(graph(), "sregym")
    assert not found, "import circles:\n" + "\n".join(
        f"  {', '.join(component)}:\n    {_describe(component)}" for component in found)


def test_nothing_below_the_api_imports_the_api() -> None:
    offenders = [f"{name} imports {target} (line {line})"
                 for name, mod in sorted(graph().items())
                 if name.startswith("sregym.twin.") and not name.startswith("sregym.twin.api")
                 for target, line in sorted(mod.imports.items()) if target.startswith("sregym.twin.api")]
    assert not offenders, "the twin below its API servers imports them:\n  " + "\n  ".join(offenders)


# What the cluster, snapshot and alerting code may take from the API package: credentials and the
# server itself, and the Prometheus API's agent-view engine (the same limits as the served one).
SERVING = {"sregym.twin.api.kubeconfig", "sregym.twin.api.serve", "sregym.twin.api.prometheus"}


def test_cluster_snapshot_and_alerts_use_the_api_only_to_serve() -> None:
    """RBAC, telemetry visibility, the log index, exec resolution and durations are domain policy
    below the API; these layers import them from there, not from the servers."""
    users = ("sregym.cluster", "sregym.snapshot", "sregym.twin.telemetry.alert")
    offenders = [f"{name} imports {target} (line {line})"
                 for name, mod in sorted(graph().items()) if name.startswith(users)
                 for target, line in sorted(mod.imports.items())
                 if target.startswith("sregym.twin.api") and target not in SERVING]
    assert not offenders, "domain logic taken from the API servers:\n  " + "\n  ".join(offenders)


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = [f"{name} imports {private} from {target} (line {line})"
                 for name, mod in sorted(graph().items())
                 for target, private, line in mod.private if target.startswith("sregym")]
    assert not offenders, "private names imported across modules:\n  " + "\n  ".join(offenders)
