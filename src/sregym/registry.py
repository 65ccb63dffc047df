"""One generic registry, used with a decorator per kind of plug-in.

Controllers, admission plugins, problems, faults, agents ... all register themselves with a
decorator at import time; `discover()` imports every module of a package so that nothing has to be
listed by hand. Registries are ordered by an explicit `order` so behaviour never depends on import
order or dictionary iteration accidents. `load_plugin_dir` imports the files of a third-party
directory (`--problems-dir`, `--agents-dir`) and turns any failure into one line naming the file.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    value: T
    order: int
    meta: dict[str, Any]


class Registry(Generic[T]):
    """Named entries of one kind, discovered lazily from one or more packages."""

    def __init__(self, kind: str, packages: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._packages = list(packages)
        self._entries: dict[str, Entry[T]] = {}
        self._discovered = False

    def register(self, name: str, value: T, *, order: int = 0, replace: bool = False,
                 **meta: Any) -> T:
        if name in self._entries and not replace and self._entries[name].value is not value:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, value, order, meta)
        return value

    def decorator(self, name: str | None = None, *, order: int = 0,
                  **meta: Any) -> Callable[[T], T]:
        def wrap(value: T) -> T:
            key = name or getattr(value, "name", None) or getattr(value, "__name__", None)
            if not key:
                raise ValueError(f"cannot infer a name for this {self.kind}")
            return self.register(str(key), value, order=order, **meta)

        return wrap

    def unregister(self, name: str) -> None:
        """Forget `name` (a plug-in or test entry that must not outlive its use); unknown is fine."""
        self._entries.pop(name, None)

    def add_package(self, package: str) -> None:
        if package not in self._packages:
            self._packages.append(package)
            self._discovered = False

    def discover(self) -> None:
        if self._discovered:
            return
        for package in self._packages:
            import_all(package)
        self._discovered = True

    def get(self, name: str) -> T:
        self.discover()
        try:
            return self._entries[name].value
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def entries(self) -> list[Entry[T]]:
        self.discover()
        return sorted(self._entries.values(), key=lambda e: (e.order, e.name))

    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def __iter__(self) -> Iterator[T]:
        return iter(e.value for e in self.entries())

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._entries

    def __len__(self) -> int:
        self.discover()
        return len(self._entries)


def import_all(package: str) -> None:
    """Import every module below `package` (recursively), so their decorators run."""
    pkg = importlib.import_module(package)
    path = getattr(pkg, "__path__", None)
    if path is None:
        return
    for info in sorted(pkgutil.walk_packages(path, prefix=package + "."), key=lambda i: i.name):
        importlib.import_module(info.name)


class PluginLoadError(ValueError):
    """A plug-in file (from `--problems-dir` / `--agents-dir`) could not be imported.

    The message is one line naming the file, the line and the exception, so the command line can
    print it as is; a traceback would point into the loader, not at the user's mistake. It is a
    `ValueError` so that callers treating bad input as a usage error need no new except clause.
    """

    def __init__(self, path: Path, line: int | None, error: BaseException) -> None:
        self.path = path
        self.line = line
        self.error = error
        where = f"{path}, line {line}" if line else str(path)
        text = getattr(error, "msg", None) if isinstance(error, SyntaxError) else str(error)
        detail = " ".join(str(text or "").split())
        super().__init__(f"cannot load {where}: {type(error).__name__}" + (f": {detail}" if detail else ""))


def load_plugin_dir(directory: str | Path, namespace: str, what: str,
                    before: Callable[[Path], object] | None = None) -> None:
    """Import every `*.py` of `directory` (sorted) as `namespace.<dir>_<path hash>.<stem>`, once
    each (after `before(directory)`, once the directory is known to exist: problems load apps first).
    The hash of the resolved path keeps two directories of the same name (`a/problems`,
    `b/problems`) apart: their modules, and the mechanisms each declares for its own problems.

    `what` names the directory in errors ("problems directory"). A missing directory or a file
    raises `FileNotFoundError` / `NotADirectoryError`; a file that fails to import raises
    `PluginLoadError` and is forgotten, so fixing it and loading again works.
    """
    given = Path(directory).expanduser()
    root = given.resolve()
    if not root.exists():
        raise FileNotFoundError(f"{what} {given} does not exist")
    if not root.is_dir():
        raise NotADirectoryError(f"{what} {given} is a file, not a directory: give the directory that holds it")
    if before is not None:
        before(root)
    package = f"{namespace}.{plugin_package(root)}"
    for path in sorted(root.glob("*.py")):
        import_plugin_file(path, f"{package}.{path.stem}", root)


def plugin_package(root: Path) -> str:
    """The module-name segment of a plug-in directory: its name (readable in tracebacks) plus a
    short digest of its resolved path (unique per directory)."""
    import hashlib

    digest = hashlib.sha256(str(root).encode()).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in root.name) or "dir"
    return f"{name}_{digest}"


def import_plugin_file(path: Path, module_name: str, root: Path) -> None:
    """Import one plug-in file as `module_name`, once; a failure raises `PluginLoadError` naming
    the file and line inside `root` where it happened, and is forgotten so a fixed file loads."""
    if module_name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise PluginLoadError(*plugin_origin(exc, path, root), exc) from exc


def plugin_origin(exc: BaseException, path: Path, root: Path) -> tuple[Path, int | None]:
    """Where the user's code failed: a syntax error's own file and line, else the deepest frame
    inside the plug-in directory (a helper module it imports), else the file being loaded."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return Path(exc.filename), exc.lineno
    import traceback

    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).resolve().is_relative_to(root):
            return Path(frame.filename), frame.lineno
    return path, None
