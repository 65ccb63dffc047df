"""What an injected JVMChaos does to a Java program's handlers.

chaos-daemon attaches Byteman to the container's JVM (`twin/chaos/jvm.py`); the rules then run
inside the program's own methods. A handler is hit when one of the `Class#method` names its
`Operation.java_methods` lists is the rule's target (`class`/`method` of the CR, or the `CLASS` and
`METHOD` lines of a `ruleData` script; a simple class name matches its package-qualified one):

- `latency`: the method sleeps `latency` ms, so every call of the handler takes that much longer;
- `exception`: the method throws the CR's `exception` (`java.io.IOException("BOOM")`): the RPC ends
  with grpc-java's `UNKNOWN` status, and grpc-java logs the uncaught exception;
- `return` (or a script's `DO return <value>`): the method returns that value. A `null` from a
  method whose result the handler dereferences is a `NullPointerException`, which fails the RPC
  the same way; any other value changes only the answer's content.

The process-wide actions hit every handler: `stress` with `memType: heap` allocates the heap
until the JVM answers allocations with `OutOfMemoryError: Java heap space` (requests fail, the
collector runs back to back); `cpuCount` stress spins that many threads (`busy_cores`). `gc` is a
single collection and leaves no lasting effect.
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.dataplane.codepaths import Branch

GRPC_UNKNOWN = "rpc error: code = Unknown desc = Application error processing RPC"
HEAP_OOM = "java.lang.OutOfMemoryError: Java heap space"
GC_PAUSE_MS = 350.0  # a full collection that frees nothing, per request that allocates
_RULE_LINE = re.compile(r"^\s*(CLASS|METHOD|DO)\s+(.*?)\s*$", re.MULTILINE)


def rule_of(spec: dict[str, Any]) -> tuple[str, str, str, str]:
    """(action, class, method, returned value) of a JVMChaos spec; `ruleData` scripts are read
    for their CLASS, METHOD and `DO return ...` / `DO throw ...` lines."""
    action = str(spec.get("action") or "")
    if action != "ruleData":
        value = spec.get("exception") if action == "exception" else spec.get("value")
        return action, str(spec.get("class") or ""), str(spec.get("method") or ""), str(value or "")
    lines = {key: value for key, value in _RULE_LINE.findall(str(spec.get("ruleData") or "").replace("\\n", "\n"))}
    body = lines.get("DO", "")
    if body.startswith("throw"):
        return "exception", lines.get("CLASS", ""), lines.get("METHOD", ""), body[len("throw"):].strip()
    if body.startswith("return"):
        return "return", lines.get("CLASS", ""), lines.get("METHOD", ""), body[len("return"):].strip().rstrip(";")
    return "", lines.get("CLASS", ""), lines.get("METHOD", ""), ""


def _matches(klass: str, method: str, java_methods: tuple[str, ...]) -> bool:
    for name in java_methods:
        owner, _, called = name.partition("#")
        if called == method and (owner == klass or owner.endswith("." + klass) or klass.endswith("." + owner)):
            return True
    return False


def _exception_name(text: str) -> str:
    """`java.io.IOException("BOOM")` -> `java.io.IOException: BOOM`."""
    name, _, rest = text.strip().removeprefix("new ").partition("(")
    message = rest.rstrip(")").strip().strip('"')
    return f"{name.strip()}: {message}" if message else name.strip()


def handler_branch(specs: list[dict[str, Any]], java_methods: tuple[str, ...]) -> Branch | None:
    """The combined effect on one handler of the JVMChaos rules injected into its process."""
    out: Branch | None = None
    for spec in specs:
        action, klass, method, value = rule_of(spec)
        if action == "stress" and str(spec.get("memType") or "").lower() == "heap":
            out = out or Branch()
            out.fail, out.error, out.error_class = 1.0, GRPC_UNKNOWN, "server_error"
            out.delay_ms += GC_PAUSE_MS
            out.logs.append(("error", f"Exception in thread \"grpc-default-executor-0\" {HEAP_OOM}", 1.0))
            continue
        if not klass or not method or not _matches(klass, method, java_methods):
            continue
        out = out or Branch()
        if action == "latency":
            out.delay_ms += float(spec.get("latency") or 0)
        elif action == "exception" or (action == "return" and value == "null"):
            thrown = _exception_name(value) if action == "exception" else "java.lang.NullPointerException"
            out.fail, out.error, out.error_class = 1.0, GRPC_UNKNOWN, "server_error"
            out.logs.append(("error", f"Exception while executing runnable io.grpc.internal.ServerImpl$"
                                      f"JumpToApplicationThreadServerStreamListener$1HalfClosed: {thrown}", 1.0))
    return out


def busy_cores(specs: list[dict[str, Any]]) -> float:
    """Threads a `cpuCount` stress spins, plus the collector running back to back on a full heap."""
    cores = 0.0
    for spec in specs:
        if spec.get("action") != "stress":
            continue
        cores += float(spec.get("cpuCount") or 0)
        if str(spec.get("memType") or "").lower() == "heap":
            cores += 1.0
    return cores


def merge(first: Branch | None, second: Branch | None) -> Branch | None:
    """Two branches taken by the same requests: failures compound, pauses add up."""
    if first is None or second is None:
        return first or second
    out = Branch(fail=1.0 - (1.0 - first.fail) * (1.0 - second.fail), delay_ms=first.delay_ms + second.delay_ms,
                 logs=[*first.logs, *second.logs])
    worse = first if first.fail >= second.fail else second
    out.error, out.error_class = worse.error or first.error or second.error, worse.error_class
    return out


__all__ = ["busy_cores", "handler_branch", "merge", "rule_of"]
