"""Browser users of a locustfile (locust-plugins' `PlaywrightUser`): page loads as the site's pages fetch.

Why: a headless Chromium driven by Playwright does not send one request per task step. Opening a
page fetches the document and then whatever the page's scripts fetch (API calls, the feature-flag
provider's resolve, product images through the proxy), and a click can navigate on the client
without a document at all. Which requests a page makes is the site's business, so the app that
serves the site registers a `SiteFn` under the program behind the entry point (`register_site`);
the twin only parses the locustfile and replays each step through it.

The locustfile is parsed, never run. A user class deriving from `PlaywrightUser` counts only if
the module-level `if` around it holds for the load generator's environment (the demo guards its
browser user with `LOCUST_BROWSER_TRAFFIC_ENABLED`); its `@task` methods' `page.goto(path)`,
`page.click(selector)`, `page.select_option(selector, value)` and `page.wait_for_timeout(ms)`
calls are the steps, in source order. Locust spreads `-u` users over the user classes by their
`weight` (1 unless set), so enabling browsers halves the HTTP users of a two-class file.

Cost: rates, not request objects. Each tick the users advance through their tasks; a task's
requests are spread over its duration (browsers run unsynchronised) and a task takes its
scripted waits plus one round trip per navigation (`wait_until="domcontentloaded"` waits for the document, not
for images or XHRs), the round trip being the HTTP users' mean latency of the previous tick.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sregym.twin.dataplane.loadgen import GeneratorWorkload
from sregym.twin.dataplane.workload import RequestMix, WorkloadSpec

BROWSER_BASE = "PlaywrightUser"
MIN_ROUND_TRIP_S = 0.001
BROWSER_SUFFIX = "/browser"  # the browsers' workload name next to the HTTP users' one


@dataclass(frozen=True)
class Visit:
    """What one step did: the page the browser is on afterwards and the requests it sent."""

    path: str
    requests: tuple[tuple[str, str], ...]  # (method, path with query)


# (action: goto/click/select, the page the browser is on, the step's argument, select's value)
SiteFn = Callable[[str, str, str, str], Visit | None]
_SITES: dict[str, SiteFn] = {}


def register_site(program: str, fn: SiteFn) -> SiteFn:
    """Let the app behind `program` (a ProgramSpec name) say what its pages fetch."""
    _SITES[program] = fn
    return fn


def site_for(program: str) -> SiteFn | None:
    return _SITES.get(program)


@dataclass(frozen=True)
class BrowserTask:
    name: str
    weight: int
    steps: tuple[tuple[str, str, str], ...]  # (action, argument, value); action "wait": ms


@dataclass(frozen=True)
class BrowserPlan:
    user_class: str
    weight: int
    tasks: tuple[BrowserTask, ...]


# ------------------------------------------------------------------------------------ parsing
_ENV_CALLS = (("os", "environ", "get"), ("os", "getenv"))


def _dotted(node: ast.expr) -> tuple[str, ...]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return tuple(reversed(parts))


class _Env:
    """Enough Python to decide a module-level `if` from the environment: constants, names bound
    earlier, `os.environ.get`/`os.getenv`, `.lower()`/`.strip()`, `in`, `==`, `not`, `and`/`or`.
    Anything else is unknown (falsy), so an unreadable guard keeps its class off."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.names = env, {}  # type: dict[str, str], dict[str, Any]

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [self.value(e) for e in node.elts]
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.value(node.operand)
        if isinstance(node, ast.BoolOp):
            values = [self.value(v) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.value(node.left), self.value(node.comparators[0])
            op = node.ops[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                found = (isinstance(right, list) and left in right) or (isinstance(right, str) and \
                    isinstance(left, str) and left in right)
                return found if isinstance(op, ast.In) else not found
            if isinstance(op, (ast.Eq, ast.NotEq)):
                return (left == right) == isinstance(op, ast.Eq)
            return None
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _call(self, node: ast.Call) -> Any:
        func = _dotted(node.func)
        if func in _ENV_CALLS and node.args:
            default = self.value(node.args[1]) if len(node.args) > 1 else None
            return self.env.get(str(self.value(node.args[0])), default)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "strip", "upper") and not node.args:
            target = self.value(node.func.value)
            return getattr(target, node.func.attr)() if isinstance(target, str) else None
        return None


def _weight(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Name) and deco.id == "task":
            return 1
        if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name) and deco.func.id == "task":
            value = ast.literal_eval(deco.args[0]) if deco.args else 1
            return int(value) if isinstance(value, (int, float)) else None
    return None


def _steps(fn: ast.AST) -> tuple[tuple[str, str, str], ...]:
    """The `page.*` calls of a task body in source order (nested withs and trys included)."""
    out: list[tuple[str, str, str]] = []

    class Visitor(ast.NodeVisitor):
        def visit_Call(self, node: ast.Call) -> None:
            self.generic_visit(node)
            if not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "page" and node.args and isinstance(node.args[0], ast.Constant)):
                return
            arg = node.args[0].value
            second = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else ""
            action = {"goto": "goto", "click": "click", "select_option": "select",
                      "wait_for_timeout": "wait"}.get(node.func.attr)
            if action is not None:
                out.append((action, str(arg), str(second)))

    Visitor().visit(fn)
    return tuple(out)


def _is_browser(cls: ast.ClassDef) -> bool:
    return any(_dotted(base)[-1:] == (BROWSER_BASE,) for base in cls.bases)


def _class_weight(cls: ast.ClassDef) -> int:
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "weight" for t in stmt.targets):
            value = ast.literal_eval(stmt.value) if isinstance(stmt.value, ast.Constant) else 1
            return int(value) if isinstance(value, (int, float)) else 1
    return 1


def _live_classes(body: list[ast.stmt], env: _Env) -> list[ast.ClassDef]:
    """The classes a module defines when run with `env` (module-level `if`s decided)."""
    out: list[ast.ClassDef] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env.names[stmt.targets[0].id] = env.value(stmt.value)
        elif isinstance(stmt, ast.ClassDef):
            out.append(stmt)
        elif isinstance(stmt, ast.If):
            out += _live_classes(stmt.body if env.value(stmt.test) else stmt.orelse, env)
    return out


def user_classes(text: str, env: dict[str, str]) -> tuple[int, BrowserPlan | None]:
    """(the weight of the first HTTP user class, the first live browser user class or None)."""
    tree = ast.parse(text)
    http_weight, browser = 1, None
    seen_http = False
    for cls in _live_classes(tree.body, _Env(env)):
        if _is_browser(cls):
            if browser is None:
                tasks = tuple(BrowserTask(fn.name, w, _steps(fn)) for fn in cls.body
                              if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                              and (w := _weight(fn)) is not None and w > 0)
                if tasks:
                    browser = BrowserPlan(cls.name, _class_weight(cls), tasks)
        elif not seen_http and any(_dotted(b)[-1:] == ("HttpUser",) for b in cls.bases):
            http_weight, seen_http = _class_weight(cls), True
    return http_weight, browser


def split_users(users: int, weights: tuple[int, ...]) -> tuple[int, ...]:
    """Locust's users per class for `-u users`: proportional to the weights, the remainders
    going to the classes in definition order."""
    total = sum(weights) or 1
    counts = [users * w // total for w in weights]
    for i in range(users - sum(counts)):
        counts[i % len(counts)] += 1
    return tuple(counts)


# ------------------------------------------------------------------------------------ the users
@dataclass
class _Browser:
    free_at: float
    task: int
    current: tuple[int, float, float] | None = None  # the task under way: (index, start, end)


class BrowserWorkload(GeneratorWorkload):
    """The browser users of the running `locust` processes; `rate(now)` advances them through the
    tick and returns the requests per second their page loads sent (the mix is those requests)."""

    adopts_process_spec = False

    def __init__(self, spec: WorkloadSpec, started_at: float, twin: Any, plan: BrowserPlan,
                 spawn_rate: float, http_workload: str = "", pod: dict[str, Any] | None = None) -> None:
        super().__init__(spec, started_at, twin)
        self.plan, self.spawn_rate, self.http_workload, self.pod = plan, spawn_rate, http_workload, pod
        self.users: list[_Browser] = []
        self.turn = 0  # Locust picks a PlaywrightUser's tasks at random by weight: a fixed rotation here
        self.spawn_from: float | None = None
        self._at: float | None = None
        self._rate = 0.0
        self._expanded: tuple[tuple[Counter[tuple[str, str]], int, float], ...] | None = None
        self._site_of: str | None = None

    def _next_task(self) -> int:
        order = [i for i, t in enumerate(self.plan.tasks) for _ in range(t.weight)]
        self.turn += 1
        return order[(self.turn - 1) % len(order)]

    def _site(self) -> str | None:
        """The program behind the entry point (whose registered site says what pages fetch)."""
        engine = self.twin.services.dataplane
        parts = urlsplit(self.spec.target)
        if engine is None or parts.hostname is None:
            return None
        route = engine.route(self.pod, parts.hostname, parts.port or 80, connect_timeout_ms=1000.0)
        for leg in route.legs:
            if leg.result.ok:
                proc = engine.proc_at(leg.result.dst_ip, leg.result.target_port)
                if proc is not None:
                    return proc.inst.spec.name
        return None

    def _tasks(self) -> tuple[tuple[Counter[tuple[str, str]], int, float], ...] | None:
        """Per task: (requests sent, navigations waited for, scripted wait seconds)."""
        if self._expanded is not None:
            return self._expanded
        program = self._site_of = self._site_of or self._site()
        site = site_for(program) if program else None
        if site is None:
            return None
        out = []
        for task in self.plan.tasks:
            sent: Counter[tuple[str, str]] = Counter()
            at, trips, waits = "", 0, 0.0
            for action, arg, value in task.steps:
                if action == "wait":
                    waits += float(arg) / 1000.0
                    continue
                visit = site(action, at, arg, value)
                if visit is None:
                    continue
                at, trips = visit.path, trips + 1
                for method, path in visit.requests:
                    sent[(method, urlsplit(path).path or "/")] += 1
            out.append((sent, trips, waits))
        self._expanded = tuple(out)
        return self._expanded

    def _round_trip_s(self) -> float:
        dataplane = self.twin.services.dataplane
        ticks = dataplane.entry.get(self.http_workload) if dataplane is not None else None
        if not ticks:
            return MIN_ROUND_TRIP_S
        components = ticks[-1].components
        weight = sum(c[0] for c in components)
        return max(MIN_ROUND_TRIP_S, sum(c[0] * c[1] for c in components) / weight / 1000.0 if weight else 0.0)

    def rate(self, now: float) -> float:
        if self._at == now:
            return self._rate
        self._at = now
        live = self._live()
        tasks = self._tasks() if live else None
        if not live or tasks is None:
            self.users.clear()
            self.spawn_from, self._rate = None, 0.0
            return 0.0
        if self.spawn_from is None:
            self.spawn_from = now
        dt = self.twin.clock.tick
        wanted = int(sum(users for _, users in live))
        spawned = math.floor((now - self.spawn_from) * self.spawn_rate) + 1 if self.spawn_rate > 0 else wanted
        while len(self.users) < min(wanted, spawned):
            self.users.append(_Browser(free_at=now, task=self._next_task()))
        del self.users[wanted:]
        trip = self._round_trip_s()
        sent: Counter[tuple[str, str]] = Counter()
        end = now + dt

        def spread(index: int, start: float, stop: float) -> None:
            """A task's requests spread over its duration: the share falling in this tick."""
            share = (min(stop, end) - max(start, now)) / (stop - start)
            if share <= 0:
                return
            for key, count in tasks[index][0].items():
                sent[key] += count * share

        for user in self.users:
            if user.current is not None and user.current[1] < now < user.current[2]:
                spread(*user.current)
            user.free_at = max(user.free_at, now)
            while user.free_at < end:
                _, trips, waits = tasks[user.task]
                start, user.free_at = user.free_at, user.free_at + max(waits + trips * trip, MIN_ROUND_TRIP_S)
                user.current = (user.task, start, user.free_at)
                spread(*user.current)
                user.task = self._next_task()
        total = sum(sent.values())
        if total:
            mix = tuple(RequestMix(operation=op, method=method, weight=count)
                        for (method, op), count in sorted(sent.items()) if count > 0)
            self.spec = self.spec.model_copy(update={"mix": mix})
        factor = super(GeneratorWorkload, self).rate(now) / max(self.spec.rps, 1e-9)
        self._rate = total / dt * factor
        return self._rate


__all__ = ["BROWSER_SUFFIX", "BrowserPlan", "BrowserTask", "BrowserWorkload", "SiteFn", "Visit", "register_site",
           "site_for", "split_users", "user_classes"]
