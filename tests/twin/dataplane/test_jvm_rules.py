"""JVMChaos rules as a Java handler feels them: a rule hits a handler only through a method the
handler runs; a `null` returned where the handler dereferences it, or a thrown exception, fails
the RPC; heap stress fails every request and keeps the collector busy."""

from __future__ import annotations

from sregym.twin.dataplane.codepaths import Branch
from sregym.twin.dataplane.jvm_rules import GRPC_UNKNOWN, HEAP_OOM, busy_cores, handler_branch, merge, rule_of

AD = ("oteldemo.AdService$AdServiceImpl#getAds", "oteldemo.AdService#getInstance")
SCRIPT = "RULE r\nCLASS AdService\nMETHOD getInstance\nAT ENTRY\nIF true\nDO return null\nENDRULE"


def test_a_rule_data_script_is_read_for_its_class_method_and_action() -> None:
    assert rule_of({"action": "ruleData", "ruleData": SCRIPT}) == ("return", "AdService", "getInstance", "null")
    escaped = SCRIPT.replace("\n", "\\n")  # a YAML plain scalar keeps `\n` as two characters
    assert rule_of({"action": "ruleData", "ruleData": escaped}) == ("return", "AdService", "getInstance", "null")
    thrown = SCRIPT.replace("DO return null", 'DO throw new java.io.IOException("disk")')
    assert rule_of({"action": "ruleData", "ruleData": thrown})[0] == "exception"
    assert rule_of({"action": "latency", "class": "A", "method": "m", "latency": 5})[:3] == ("latency", "A", "m")


def test_a_null_return_fails_the_handler_that_calls_the_method_and_no_other() -> None:
    taken = handler_branch([{"action": "ruleData", "ruleData": SCRIPT}], AD)
    assert taken is not None and taken.fail == 1.0 and taken.error == GRPC_UNKNOWN
    assert "java.lang.NullPointerException" in taken.logs[0][1]
    assert handler_branch([{"action": "ruleData", "ruleData": SCRIPT}], ("oteldemo.Other#getInstance",)) is None
    assert handler_branch([{"action": "return", "class": "AdService", "method": "getInstance", "value": "7"}],
                          AD) is not None  # another value: the answer changes, the call succeeds
    assert handler_branch([{"action": "return", "class": "AdService", "method": "getInstance", "value": "7"}],
                          AD).fail == 0.0


def test_latency_and_exception_actions_on_a_method() -> None:
    slow = handler_branch([{"action": "latency", "class": "oteldemo.AdService", "method": "getInstance",
                            "latency": 800}], AD)
    assert slow is not None and slow.delay_ms == 800 and slow.fail == 0.0
    boom = handler_branch([{"action": "exception", "class": "AdService$AdServiceImpl", "method": "getAds",
                            "exception": 'java.io.IOException("BOOM")'}], AD)
    assert boom is not None and boom.fail == 1.0 and "java.io.IOException: BOOM" in boom.logs[0][1]


def test_heap_stress_fails_every_handler_and_busies_the_collector() -> None:
    stress = [{"action": "stress", "memType": "heap"}]
    taken = handler_branch(stress, ())
    assert taken is not None and taken.fail == 1.0 and HEAP_OOM in taken.logs[0][1]
    assert busy_cores(stress) == 1.0 and busy_cores([{"action": "stress", "cpuCount": 2}]) == 2.0
    assert busy_cores([{"action": "gc"}]) == 0.0


def test_merge_compounds_failures_and_adds_pauses() -> None:
    both = merge(Branch(fail=0.5, error="a", delay_ms=10), Branch(fail=0.5, error="b", delay_ms=5))
    assert both is not None and both.fail == 0.75 and both.delay_ms == 15
    assert merge(None, None) is None
