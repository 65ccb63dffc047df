"""Node OS state: conntrack exhaustion and disk pressure."""

from __future__ import annotations

from sregym.twin import Twin

NODE = "kind-worker"


def test_conntrack_full_drops_and_logs() -> None:
    twin = Twin(seed=3)
    nodeos = twin.services.nodeos
    nodeos.set_conntrack_max(NODE, 1000)
    assert nodeos.add_connections(NODE, 600) == 600
    assert not nodeos.conntrack_full(NODE)
    admitted = nodeos.add_connections(NODE, 600)
    assert admitted == 400 and nodeos.conntrack_full(NODE)
    assert nodeos.conntrack(NODE) == (1000, 1000)
    kernel = [line.text for line in twin.services.logs.node_lines(NODE, "kernel")]
    assert kernel.count("nf_conntrack: nf_conntrack: table full, dropping packet") == 10
    twin.advance(6)
    nodeos.add_connections(NODE, 50)
    kernel = [line.text for line in twin.services.logs.node_lines(NODE, "kernel")]
    assert "net_ratelimit: 190 callbacks suppressed" in kernel
    # Entries expire once traffic stops: new connections are accepted again.
    twin.advance(300)
    assert not nodeos.conntrack_full(NODE) and nodeos.add_connections(NODE, 10) == 10


def test_full_disk_sets_disk_pressure_condition_and_taint() -> None:
    twin = Twin(seed=3)
    nodeos = twin.services.nodeos
    disk = nodeos.disk(NODE)
    nodeos.fill_disk(NODE, disk.avail_bytes - disk.size_bytes // 20)
    twin.advance(12)
    node = twin.get("nodes", None, NODE)
    cond = next(c for c in node["status"]["conditions"] if c["type"] == "DiskPressure")
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "KubeletHasDiskPressure",
                                                                 "kubelet has disk pressure")
    assert any(t["key"] == "node.kubernetes.io/disk-pressure" for t in node["spec"].get("taints") or [])
    assert any(e["reason"] == "NodeHasDiskPressure" for e in twin.event_list(involved_name=NODE))
    kubelet = [line.text for line in twin.services.logs.node_lines(NODE, "kubelet")]
    assert any('"Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"' in t for t in kubelet)
    fs = {f["mountpoint"]: f for f in nodeos.filesystems(NODE)}
    assert fs["/"]["avail_bytes"] < 0.1 * fs["/"]["size_bytes"]
    # Freed: the condition clears only after the pressure transition period.
    nodeos.fill_disk(NODE, -(disk.size_bytes // 2))
    twin.advance(60)
    cond = next(c for c in twin.get("nodes", None, NODE)["status"]["conditions"] if c["type"] == "DiskPressure")
    assert cond["status"] == "True"
    twin.advance(300)
    node = twin.get("nodes", None, NODE)
    cond = next(c for c in node["status"]["conditions"] if c["type"] == "DiskPressure")
    assert cond["status"] == "False" and cond["reason"] == "KubeletHasNoDiskPressure"
    assert not any(t["key"] == "node.kubernetes.io/disk-pressure" for t in node["spec"].get("taints") or [])
