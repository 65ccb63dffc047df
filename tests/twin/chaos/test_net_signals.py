"""NetworkChaos loss, duplication and corruption as an engineer sees them: ping per packet, the
namespace's TCP counters (/proc/net/snmp, netstat -s, node-exporter via PromQL) and the data
plane's latency and timeouts (TCP retransmission backoff, not dropped requests)."""

from __future__ import annotations

import re

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos import install_chaos_mesh
from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.dataplane.tcp_loss import retransmit_penalty_ms, timeout_fraction
from sregym.twin.node.images import ImageSpec, catalogue_of
from sregym.twin.telemetry.promql import Engine
from sregym.twin.userland.context import exec_context, run_exec
from support.chaos_web import WEB, chaos, ready_pods


def _with_net_tools(twin: Twin) -> Twin:
    """The stock nginx image ships no ping or netstat: this twin's nginx build adds them
    (`apt-get install iputils-ping net-tools`), so the web pods can measure their own paths."""
    catalogue_of(twin).register(ImageSpec(repository="docker.io/library/nginx", tags=("1.27",),
                                          extras={"add_binaries": ["ping", "netstat"]}))
    return twin


@pytest.fixture(scope="module")
def shaped() -> tuple[Twin, dict, dict]:
    """Four web pods; the first has 30% loss, 10% duplication and 5% corruption on everything."""
    twin = _with_net_tools(Twin(seed=11))
    install_chaos_mesh(twin)
    twin.apply(WEB)
    assert twin.settle(60, until=lambda: len(ready_pods(twin)) == 4)
    twin.advance(60)
    pods = sorted(ready_pods(twin), key=lambda p: p["metadata"]["name"])
    twin.create(chaos("NetworkChaos", "lossy", {
        "action": "netem", "mode": "all", "selector": {"pods": {"default": [pods[0]["metadata"]["name"]]}},
        "loss": {"loss": "30"}, "duplicate": {"duplicate": "10"}, "corrupt": {"corrupt": "5"},
        "delay": {"latency": "10ms", "jitter": "2ms"}}))
    twin.advance(120)
    return twin, pods[0], pods[1]


def _run(twin: Twin, pod: dict, container: str, *argv: str) -> tuple[str, str, int]:
    current = twin.store.peek("Pod", "default", pod["metadata"]["name"])
    result = run_exec(exec_context(twin, current, container), list(argv))
    return result.stdout, result.stderr, result.exit_code


def test_ping_shows_partial_loss_duplicates_and_jitter(shaped: tuple[Twin, dict, dict]) -> None:
    twin, src, dst = shaped
    ip = dst["status"]["podIP"]
    out, _, code = _run(twin, src, "nginx", "ping", "-c", "40", ip)
    assert code == 0
    seqs = [int(s) for s in re.findall(r"icmp_seq=(\d+) ttl=\d+ time=[\d.]+ ms(?: \(DUP!\))?\n", out)]
    dups = out.count(" (DUP!)\n")
    summary = re.search(r"40 packets transmitted, (\d+) received(, \+(\d+) duplicates)?, ([\d.]+)% packet loss, "
                        r"time \d+ms\nrtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms\n$", out)
    assert summary is not None, out
    received = int(summary.group(1))
    assert len(seqs) == received + dups and received == len(set(seqs))  # only answered seqs have lines
    assert int(summary.group(3) or 0) == dups
    assert 15 <= 100 - received * 100 / 40 <= 50  # ~30% loss (+5% corruption dropped by checksum)
    assert float(summary.group(4)) == pytest.approx((40 - received) * 100 / 40, abs=1e-3)
    low, high = float(summary.group(5)), float(summary.group(7))
    assert 7.5 < low < high < 12.6 and float(summary.group(8)) > 0.3  # 10ms ± 2ms jitter
    # BusyBox: `seq=` from 0, `N duplicates, ` and an integer loss percentage.
    out, _, code = _run(twin, src, "sidecar", "ping", "-c", "40", ip)
    bb = re.search(r"40 packets transmitted, (\d+) packets received, (?:(\d+) duplicates, )?(\d+)% packet loss\n", out)
    assert code == 0 and bb is not None and re.search(r"\n64 bytes from [\d.]+: seq=\d+ ttl=62 time=", out)
    assert int(bb.group(3)) == (40 - int(bb.group(1))) * 100 // 40
    assert out.count(" (DUP!)\n") == int(bb.group(2) or 0)


def test_ping_output_is_deterministic_per_seed() -> None:
    def once() -> str:
        twin = _with_net_tools(Twin(seed=5))
        twin.apply(WEB.replace("replicas: 4", "replicas: 2"))
        assert twin.settle(60, until=lambda: len(ready_pods(twin)) == 2)
        a, b = sorted(ready_pods(twin), key=lambda p: p["metadata"]["name"])
        twin.create(chaos("NetworkChaos", "loss", {"action": "loss", "mode": "all", "loss": {"loss": "30"},
                                                   "selector": {"pods": {"default": [a["metadata"]["name"]]}}},
                          namespace="default"))
        twin.advance(2)
        return _run(twin, a, "nginx", "ping", "-c", "10", b["status"]["podIP"])[0]

    first = once()
    assert first == once()
    assert "10 packets transmitted, " in first and "% packet loss" in first


def test_proc_net_snmp_and_netstat_s_show_retransmissions(shaped: tuple[Twin, dict, dict]) -> None:
    twin, src, dst = shaped
    snmp, _, code = _run(twin, src, "nginx", "cat", "/proc/net/snmp")
    lines = snmp.splitlines()
    assert code == 0 and [line.split(":")[0] for line in lines] == [
        "Ip", "Ip", "Icmp", "Icmp", "Tcp", "Tcp", "Udp", "Udp", "UdpLite", "UdpLite"]
    header, values = lines[4].split()[1:], [int(v) for v in lines[5].split()[1:]]
    assert header == ["RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn", "ActiveOpens", "PassiveOpens", "AttemptFails",
                      "EstabResets", "CurrEstab", "InSegs", "OutSegs", "RetransSegs", "InErrs", "OutRsts",
                      "InCsumErrors"]
    tcp = dict(zip(header, values, strict=True))
    assert tcp["RtoMin"] == 200 and tcp["MaxConn"] == -1
    assert tcp["OutSegs"] > 0 and tcp["RetransSegs"] > 0.1 * tcp["OutSegs"]  # 30% loss retransmits a lot
    assert tcp["InCsumErrors"] > 0 and tcp["InErrs"] >= tcp["InCsumErrors"]
    healthy, _, _ = _run(twin, dst, "nginx", "cat", "/proc/net/snmp")
    clean = dict(zip(header, [int(v) for v in healthy.splitlines()[5].split()[1:]], strict=True))
    assert clean["RetransSegs"] < 0.01 * clean["OutSegs"]
    ext, _, _ = _run(twin, src, "nginx", "cat", "/proc/net/netstat")
    assert ext.startswith("TcpExt: SyncookiesSent SyncookiesRecv ") and "\nIpExt: InNoRoutes " in ext
    stats, _, code = _run(twin, src, "nginx", "netstat", "-s")
    assert code == 0 and f"    {tcp['RetransSegs']} segments retransmitted\n" in stats
    assert "\nTcpExt:\n" in stats and re.search(r"\n    TCPTimeouts: \d+\n", stats)
    # Counters only grow.
    twin.advance(10)
    again, _, _ = _run(twin, src, "nginx", "cat", "/proc/net/snmp")
    later = dict(zip(header, [int(v) for v in again.splitlines()[5].split()[1:]], strict=True))
    assert later["RetransSegs"] > tcp["RetransSegs"] and later["OutSegs"] > tcp["OutSegs"]
    _, err, code = _run(twin, src, "sidecar", "netstat", "-s")
    assert code == 1 and err.startswith("netstat: invalid option -- 's'\nBusyBox v1.36.1")


def test_node_retransmits_rise_in_promql(shaped: tuple[Twin, dict, dict]) -> None:
    twin, src, _ = shaped
    engine = Engine(twin.services.tsdb)
    now_ms = int(twin.clock.now * 1000)
    node = src["spec"]["nodeName"]
    rows = engine.instant(f'rate(node_netstat_Tcp_RetransSegs{{node="{node}"}}[1m])'
                          f' / rate(node_netstat_Tcp_OutSegs{{node="{node}"}}[1m])', now_ms).value
    assert len(rows) == 1 and rows[0].value > 0.005
    before = engine.instant(f'node_netstat_Tcp_RetransSegs{{node="{node}"}}', now_ms - 150_000).value
    after = engine.instant(f'node_netstat_Tcp_RetransSegs{{node="{node}"}}', now_ms).value
    assert after[0].value > before[0].value


@pytest.mark.parametrize(("p", "timeout", "late_min", "late_max", "extra_min"), [
    (0.0, 1000, 0.0, 0.0, 0.0),
    (0.3, 1000, 0.05, 0.15, 300.0),
    (0.6, 1000, 0.5, 1.0, 400.0),
])
def test_tcp_loss_costs_backoff_then_timeouts(p: float, timeout: float, late_min: float, late_max: float,
                                              extra_min: float) -> None:
    late = timeout_fraction(p, timeout)
    assert late_min <= late <= late_max
    assert retransmit_penalty_ms(p, timeout) >= extra_min
    assert retransmit_penalty_ms(p, timeout) <= timeout


def test_loss_slows_callers_and_times_some_out() -> None:
    twin = _with_net_tools(Twin(seed=3))
    synthetic_app("lossy", layers=(1, 1), rps=50, timeout="1s").deploy(twin)
    twin.advance(60)
    healthy = twin.services.dataplane.entry_stats(30)
    pod = twin.list("pods", "lossy", label_selector="app=svc-1-0")[0]
    twin.create(chaos("NetworkChaos", "loss", {"action": "loss", "mode": "all", "loss": {"loss": "30"},
                                               "selector": {"pods": {"lossy": [pod["metadata"]["name"]]}}},
                      namespace="lossy"))
    twin.advance(40)
    shaped = twin.services.dataplane.entry_stats(30)
    assert shaped.p95_ms > healthy.p95_ms + 200  # retransmission backoff, not 30% failed requests
    assert 0.7 < shaped.success_ratio < 0.99
