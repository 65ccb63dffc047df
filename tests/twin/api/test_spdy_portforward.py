"""The SPDY/3.1 codec and the port-forward session, driven frame by frame like client-go does."""

from __future__ import annotations

import asyncio
import zlib
from types import SimpleNamespace
from typing import Any

import pytest

from sregym.twin.api.kube import pod_portforward, spdy
from sregym.twin.dataplane import loopback


def test_dictionary_is_the_spdy3_one() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert zlib.adler32(spdy.DICTIONARY) == 3821447106


def test_frames_survive_any_split_and_share_one_zlib_stream() -> None:
    client, server = spdy.HeaderCodec(), spdy.HeaderCodec()
    wire = (spdy.syn_stream(client, 1, {"streamType": "error", "port": "80", "requestID": "0"})
            + spdy.data(1, b"", fin=True)
            + spdy.syn_stream(client, 3, {"streamtype": "data", "port": "80", "requestid": "0"})
            + spdy.data(3, b"GET / HTTP/1.1\r\n\r\n") + spdy.ping(1) + spdy.rst_stream(3, spdy.CANCEL))
    reader = spdy.FrameReader(server)
    frames: list[spdy.Frame] = []
    for i in range(0, len(wire), 3):
        frames += reader.feed(wire[i:i + 3])
    kinds = [f.kind for f in frames]
    assert kinds == [spdy.SYN_STREAM, 0, spdy.SYN_STREAM, 0, spdy.PING, spdy.RST_STREAM]
    assert frames[0].headers == {"streamtype": "error", "port": "80", "requestid": "0"}
    assert frames[2].headers["streamtype"] == "data"  # decoded with the shared context
    assert frames[1].fin and frames[3].data.startswith(b"GET /")
    assert frames[4].value == 1 and frames[5].value == spdy.CANCEL


def test_wrong_version_is_a_protocol_error() -> None:
    bad = b"\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01"
    with pytest.raises(spdy.ProtocolError):
        spdy.FrameReader(spdy.HeaderCodec()).feed(bad)


class _Conn:
    def __init__(self, *_: Any) -> None:
        self.closed = False

    def feed(self, chunk: bytes) -> bytes:
        self.closed = b"Connection: close" in chunk
        return b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def _session(monkeypatch: pytest.MonkeyPatch, listening: bool) -> tuple[Any, list[bytes]]:
    pod = {"metadata": {"namespace": "ns", "name": "web", "uid": "u-1"}, "spec": {"nodeName": "n"},
           "status": {"podIP": "10.244.1.2"}}
    monkeypatch.setattr(pod_portforward, "listens", lambda *_: listening)
    monkeypatch.setattr(pod_portforward, "LoopbackConnection", _Conn)
    ctx = SimpleNamespace(twin=SimpleNamespace(store=SimpleNamespace(peek=lambda *_: pod)))
    sent: list[bytes] = []

    async def send(payload: bytes) -> None:
        sent.append(payload)

    return pod_portforward.PortForwardSession(ctx, pod, send), sent  # type: ignore[arg-type]


def _client_open(codec: spdy.HeaderCodec, port: str) -> bytes:
    return (spdy.syn_stream(codec, 1, {"streamtype": "error", "port": port, "requestid": "0"})
            + spdy.data(1, b"", fin=True)
            + spdy.syn_stream(codec, 3, {"streamtype": "data", "port": port, "requestid": "0"}))


def _decode(sent: list[bytes]) -> list[spdy.Frame]:
    return spdy.FrameReader(spdy.HeaderCodec()).feed(b"".join(sent))


def test_session_relays_data_and_closes_both_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, listening=True)
    codec = spdy.HeaderCodec()
    asyncio.run(session.receive(_client_open(codec, "8080") + spdy.ping(1)
                                + spdy.data(3, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")))
    frames = _decode(sent)
    assert [(f.kind, f.stream_id) for f in frames[:3]] == [(spdy.SYN_REPLY, 1), (spdy.SYN_REPLY, 3),
                                                           (spdy.PING, 0)]
    assert frames[3].stream_id == 3 and frames[3].data.endswith(b"\r\n\r\nok")
    closes = [(f.stream_id, f.fin, f.data) for f in frames[4:]]
    assert closes == [(1, True, b""), (3, True, b"")]


def test_session_reports_a_refused_port_on_the_error_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    session, sent = _session(monkeypatch, listening=False)
    asyncio.run(session.receive(_client_open(spdy.HeaderCodec(), "9999")))
    frames = _decode(sent)
    message = frames[2].data.decode()
    sandbox = loopback.sandbox_id({"metadata": {"uid": "u-1"}})
    assert frames[2].stream_id == 1
    assert message.startswith(f"error forwarding port 9999 to pod {sandbox}, uid : failed to execute "
                              "portforward in network namespace \"/var/run/netns/cni-")
    assert message.endswith("IPv4: dial tcp4 127.0.0.1:9999: connect: connection refused IPv6 dial "
                            "tcp6 [::1]:9999: connect: connection refused ")
    assert [(f.stream_id, f.fin) for f in frames[3:]] == [(1, True), (3, True)]


def test_loopback_http_parsing_keeps_pipelined_requests_apart() -> None:
    buf = bytearray(b"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.0\r\n\r\n")
    first = loopback.parse_request(buf)
    second = loopback.parse_request(buf)
    assert first is not None and first.body == b"abc" and first.keep_alive
    assert second is not None and second.target == "/b" and not second.keep_alive
    assert loopback.parse_request(buf) is None
