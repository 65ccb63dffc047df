"""Locust as a program: a closed-loop load generator whose users wait for their answers.

A load-generator Deployment runs `locust -f locustfile.py --headless -u USERS -r SPAWN_RATE -H HOST`.
The process reads what the real one reads: its argv and the mounted locustfile, whose `HttpUser`
classes give the think time (`wait_time = constant(s)` / `between(a, b)`, the mean is used) and
the weighted tasks (`@task(w)` methods, each a sequence of `self.client.get("/path")` /
`post(...)` calls). The locustfile is parsed with `ast`, never executed.

Unlike wrk2 (open loop, `loadgen.py`), every simulated user sends its next request only after the
previous one answered, and thinks between tasks. The users are simulated one by one each tick: the
latency a request takes is the entry latency the data plane measured on the previous tick (a
refused or timed-out request takes its time too), so when the app gets slower each user gets
through fewer requests and the offered load falls, as with a real closed-loop client. Users are
spawned at `-r` per second up to `-u`, and pick tasks by weight in a fixed smooth round-robin
(deterministic: no random stream is consumed). A live `PlaywrightUser` class takes its share of
the users and runs as a second workload beside them (`browser.py`).
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sregym.twin.dataplane.browser import BROWSER_SUFFIX, BrowserWorkload, split_users, user_classes
from sregym.twin.dataplane.loadgen import (
    APP_ANNOTATION,
    GeneratorWorkload,
    attach_generator,
    detach_generator,
    resolve_host,
)
from sregym.twin.dataplane.locust_flags import LocustFlags, task_flag
from sregym.twin.dataplane.locust_web import LocustTally
from sregym.twin.dataplane.workload import RequestMix, WorkloadSpec
from sregym.twin.node.images import argv_flag
from sregym.twin.node.shell import FOREVER, Invocation, Program, Sleep, Usage

MIB = 1 << 20
DEFAULT_TIMEOUT_MS = 60_000.0  # requests' default timeout in Locust's HttpSession is none; cap it
MIN_LATENCY_S = 0.001


@dataclass(frozen=True)
class FlowTask:
    name: str
    weight: int
    requests: tuple[tuple[str, str], ...]  # (method, path)
    flag: str | None = None  # repeat the requests this flag's value times (locust_flags.py)


@dataclass(frozen=True)
class LocustPlan:
    think_s: float
    tasks: tuple[FlowTask, ...]


def _number(node: ast.expr) -> float:
    value = ast.literal_eval(node)
    if not isinstance(value, (int, float)):
        raise ValueError("not a number")
    return float(value)


def _think(node: ast.expr) -> float:
    """Mean seconds of a `wait_time = constant(x)` / `between(a, b)` / `constant_pacing(x)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_number(a) for a in node.args]
        if node.func.id in ("constant", "constant_pacing") and len(args) == 1:
            return args[0]
        if node.func.id == "between" and len(args) == 2:
            return (args[0] + args[1]) / 2.0
    raise ValueError("wait_time must be constant(x) or between(a, b)")


def _task_weight(fn: ast.FunctionDef) -> int | None:
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Name) and deco.id == "task":
            return 1
        if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Name) and deco.func.id == "task":
            return int(_number(deco.args[0])) if deco.args else 1
    return None


def _requests(fn: ast.FunctionDef) -> tuple[tuple[str, str], ...]:
    """The `self.client.<method>("/path", ...)` calls of a task body, in source order."""
    out: list[tuple[str, str]] = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Attribute) and owner.attr == "client" and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.append((node.func.attr.upper(), node.args[0].value))
    return tuple(out)


def parse_locustfile(text: str) -> LocustPlan:
    """The think time and the weighted tasks of the locustfile's first `HttpUser` class."""
    tree = ast.parse(text)
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        think: float | None = None
        tasks: list[FlowTask] = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "wait_time"
                                                    for t in stmt.targets):
                think = _think(stmt.value)
            elif isinstance(stmt, ast.FunctionDef):
                weight = _task_weight(stmt)
                requests = _requests(stmt)
                if weight is not None and weight > 0 and requests:
                    tasks.append(FlowTask(stmt.name, weight, requests, task_flag(stmt)))
        if tasks:
            return LocustPlan(think_s=think or 0.0, tasks=tuple(tasks))
    raise ValueError("No User class found!")


# ------------------------------------------------------------------------------------ the users
@dataclass
class _User:
    free_at: float  # when the user sends its next request
    task: int
    step: int = 0


@dataclass
class _Picker:
    """Smooth weighted round-robin over the tasks (nginx's): deterministic, proportional."""

    weights: tuple[int, ...]
    current: list[int] = field(default_factory=list)

    def next(self) -> int:
        if not self.current:
            self.current = [0] * len(self.weights)
        total = sum(self.weights)
        for i, w in enumerate(self.weights):
            self.current[i] += w
        best = max(range(len(self.weights)), key=lambda i: (self.current[i], -i))
        self.current[best] -= total
        return best


class ClosedLoopWorkload(GeneratorWorkload):
    """The users of the running `locust` processes. `rate(now)` advances every user through the
    tick [now, now + tick) and returns the requests they sent per second; the spec's mix becomes
    the requests they sent, so the engine routes exactly those."""

    adopts_process_spec = False

    def __init__(self, spec: WorkloadSpec, started_at: float, twin: Any, plan: LocustPlan,
                 spawn_rate: float, flags: LocustFlags | None = None, pod: dict[str, Any] | None = None,
                 base_url: str = "") -> None:
        super().__init__(spec, started_at, twin)
        self.tally = LocustTally(base_url=base_url.rstrip("/"))  # what the web UI's /stats/requests reports
        self.plan = plan
        self.flags, self.pod = flags or LocustFlags(), pod
        self.spawn_rate = spawn_rate
        self.users: list[_User] = []
        self.picker = _Picker(tuple(t.weight for t in plan.tasks))
        self.spawn_from: float | None = None
        self._at: float | None = None
        self._rate = 0.0
        self.sent = 0  # requests sent so far (all users)

    def _latency_s(self) -> float:
        dataplane = self.twin.services.dataplane
        ticks = dataplane.entry.get(self.spec.name) if dataplane is not None else None
        if not ticks:
            return MIN_LATENCY_S
        components = ticks[-1].components
        weight = sum(c[0] for c in components)
        mean_ms = sum(c[0] * c[1] for c in components) / weight if weight > 0 else 0.0
        return max(MIN_LATENCY_S, mean_ms / 1000.0)

    def rate(self, now: float) -> float:
        if self._at == now:
            return self._rate
        self._at = now
        live = self._live()
        if not live:
            self.users.clear()
            self.spawn_from = None
            self._rate = 0.0
            return 0.0
        if self.spawn_from is None:
            self.spawn_from = now
        dt = self.twin.clock.tick
        wanted = int(sum(users for _, users in live))
        spawned = math.floor((now - self.spawn_from) * self.spawn_rate) + 1 if self.spawn_rate > 0 else wanted
        while len(self.users) < min(wanted, spawned):
            self.users.append(_User(free_at=now, task=self.picker.next()))
        del self.users[wanted:]
        latency, think = self._latency_s(), self.plan.think_s
        steps = self._steps()
        sent: Counter[tuple[str, str]] = Counter()
        for user in self.users:
            user.free_at = max(user.free_at, now - dt)  # a user never banks idle time
            while user.free_at < now + dt:
                task = self.plan.tasks[user.task]
                if not steps[user.task]:  # a flag-repeated task with a count of 0 sends nothing
                    user.step, user.task = 0, self.picker.next()
                    user.free_at += max(think, MIN_LATENCY_S)
                    continue
                method, path = task.requests[user.step % len(task.requests)]
                sent[(method, urlsplit(path).path or "/")] += 1
                user.free_at += latency
                user.step += 1
                if user.step >= steps[user.task]:
                    user.step, user.task = 0, self.picker.next()
                    user.free_at += think
        total = sum(sent.values())
        self.sent += total
        self.tally.record(self.twin, self, sent, now)
        if total:
            mix = tuple(RequestMix(operation=op, method=method, weight=count)
                        for (method, op), count in sorted(sent.items()))
            self.spec = self.spec.model_copy(update={"mix": mix})
        factor = super(GeneratorWorkload, self).rate(now) / max(self.spec.rps, 1e-9)
        self._rate = total / dt * factor
        return self._rate


    def _steps(self) -> list[int]:
        """Requests each task sends when picked now: flag-repeated tasks ask flagd once a tick."""
        counts: dict[str, int] = {}
        out = []
        for task in self.plan.tasks:
            if task.flag is None:
                out.append(len(task.requests))
                continue
            if task.flag not in counts:
                counts[task.flag] = self.flags.value(self.twin, self.pod, task.flag)
            out.append(len(task.requests) * counts[task.flag])
        return out


# ------------------------------------------------------------------------------------ the program
def locust_command(call: Invocation) -> Program:
    """`locust --headless`: a closed-loop HTTP load generator driving the data plane while it runs."""
    ctx = call.ctx
    twin = ctx.twin
    argv = list(call.args)
    path = argv_flag(argv, "-f", "--locustfile") or "locustfile.py"
    host = argv_flag(argv, "-H", "--host") or ""
    try:
        users = int(argv_flag(argv, "-u", "--users") or "1")
        spawn_rate = float(argv_flag(argv, "-r", "--spawn-rate") or "1")
    except ValueError as exc:
        call.error(f"locust: error: argument: invalid value ({exc})")
        return 2
    text = call.read_file(path if path.startswith("/") else f"/{path}")
    if text is None:
        call.error(f"Could not find '{path}'. Ensure your locustfile ends with '.py' or is a directory "
                   "with locustfiles.")
        return 1
    try:
        plan = parse_locustfile(text)
    except (SyntaxError, ValueError) as exc:
        call.error(f"locust: {exc}")
        return 1
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        call.error(f"Invalid host ({host}), must be a valid URL starting with http:// or https://")
        return 1
    port = parts.port or (443 if parts.scheme == "https" else 80)
    pod = ctx.pod
    ip, gai_error = resolve_host(twin, pod, parts.hostname) if twin is not None else (parts.hostname, "")
    if ip is None:
        call.error(f"ConnectionError: {parts.hostname}: {gai_error}")
        return 1
    call.write(f"Starting Locust 2.32.4\nRamping to {users} users at a rate of {spawn_rate:.2f} per second\n",
               "stderr")
    yield Usage(memory_bytes=int((40 + 0.3 * users) * MIB), cpu_cores=0.01 + 0.002 * users)
    meta = (pod or {}).get("metadata") or {}
    namespace, pod_name = meta.get("namespace", "default"), meta.get("name", "")
    name = (meta.get("annotations") or {}).get(APP_ANNOTATION) or f"{namespace}/{pod_name}"
    key = (namespace, pod_name, ctx.container)
    mix = tuple(RequestMix(operation=urlsplit(p).path or "/", method=m) for m, p in plan.tasks[0].requests[:1])
    spec = WorkloadSpec(name=name, target=f"{parts.scheme}://{ip}:{port}", rps=1.0, mix=mix,
                        timeout_ms=DEFAULT_TIMEOUT_MS, source_namespace=namespace,
                        source_labels=dict(meta.get("labels") or {}))
    http_users, browsers = users, 0
    http_weight, browser = user_classes(text, dict(ctx.env))
    if browser is not None:  # a live PlaywrightUser class takes its share of -u (browser.py)
        http_users, browsers = split_users(users, (http_weight, browser.weight))
    if twin is not None:
        attach_generator(twin, name, key, ctx, spec, amount=float(http_users), cls=ClosedLoopWorkload, plan=plan,
                         spawn_rate=spawn_rate * http_users / max(users, 1),
                         flags=LocustFlags.from_env(dict(ctx.env)), pod=pod, base_url=host)
        if browser is not None:
            attach_generator(twin, name + BROWSER_SUFFIX, key, ctx,
                             spec.model_copy(update={"name": name + BROWSER_SUFFIX}), amount=float(browsers),
                             cls=BrowserWorkload, plan=browser, spawn_rate=spawn_rate * browsers / max(users, 1),
                             http_workload=name, pod=pod)
    try:
        yield Sleep(FOREVER)
    finally:
        if twin is not None:
            detach_generator(twin, name, key, ctx)
            detach_generator(twin, name + BROWSER_SUFFIX, key, ctx)
    return 0


__all__ = ["ClosedLoopWorkload", "FlowTask", "LocustPlan", "locust_command", "parse_locustfile"]
