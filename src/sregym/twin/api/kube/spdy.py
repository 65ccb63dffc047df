"""SPDY/3.1 framing, the multiplexing layer under `kubectl port-forward`.

client-go opens one SPDY/3.1 session per `port-forward` (moby/spdystream as the engine) and one
pair of streams per local connection. Since 1.31 (`PortForwardWebsockets`) the session travels
inside a WebSocket whose binary messages carry the SPDY byte stream (message boundaries mean
nothing); the older transport is the same session over an HTTP/1.1 `Upgrade: SPDY/3.1`.

What the server side needs, per draft-mbelshe-httpbis-spdy-00:

- a control frame is `1 | version(15)=3 | type(16) | flags(8) | length(24) | payload`; a data
  frame is `0 | stream-id(31) | flags(8) | length(24) | data`; FLAG_FIN (0x01) half-closes;
- SYN_STREAM/SYN_REPLY/HEADERS carry a name/value block (`count(32)`, then `len(32) name
  len(32) value` pairs, names lower-case, several values NUL-separated) compressed with zlib
  using the SPDY/3 dictionary below as preset dictionary; each direction is ONE zlib stream for
  the whole session, flushed (Z_SYNC_FLUSH) at the end of every block;
- PING frames from the peer are echoed with the same id; SETTINGS and WINDOW_UPDATE are advisory
  (spdystream does not enforce flow-control windows).

This module only encodes and decodes; `pod_portforward` runs the session.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
# RST_STREAM status codes.
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, CANCEL, INTERNAL_ERROR = 1, 2, 3, 5, 6
MAX_DATA = (1 << 24) - 1

# The SPDY/3 header-compression dictionary (1423 bytes, from the SPDY/3 specification).
DICTIONARY = bytes.fromhex(
    "000000076f7074696f6e73000000046865616400000004706f7374000000037075740000000664656c65746500000005"
    "7472616365000000066163636570740000000e6163636570742d636861727365740000000f6163636570742d656e636f"
    "64696e670000000f6163636570742d6c616e67756167650000000d6163636570742d72616e6765730000000361676500"
    "000005616c6c6f770000000d617574686f72697a6174696f6e0000000d63616368652d636f6e74726f6c0000000a636f"
    "6e6e656374696f6e0000000c636f6e74656e742d6261736500000010636f6e74656e742d656e636f64696e6700000010"
    "636f6e74656e742d6c616e67756167650000000e636f6e74656e742d6c656e67746800000010636f6e74656e742d6c6f"
    "636174696f6e0000000b636f6e74656e742d6d64350000000d636f6e74656e742d72616e67650000000c636f6e74656e"
    "742d74797065000000046461746500000004657461670000000665787065637400000007657870697265730000000466"
    "726f6d00000004686f73740000000869662d6d617463680000001169662d6d6f6469666965642d73696e63650000000d"
    "69662d6e6f6e652d6d617463680000000869662d72616e67650000001369662d756e6d6f6469666965642d73696e6365"
    "0000000d6c6173742d6d6f646966696564000000086c6f636174696f6e0000000c6d61782d666f727761726473000000"
    "06707261676d610000001270726f78792d61757468656e7469636174650000001370726f78792d617574686f72697a61"
    "74696f6e0000000572616e676500000007726566657265720000000b72657472792d6166746572000000067365727665"
    "7200000002746500000007747261696c6572000000117472616e736665722d656e636f64696e67000000077570677261"
    "64650000000a757365722d6167656e74000000047661727900000003766961000000077761726e696e67000000107777"
    "772d61757468656e746963617465000000066d6574686f64000000036765740000000673746174757300000006323030"
    "204f4b0000000776657273696f6e00000008485454502f312e310000000375726c000000067075626c69630000000a73"
    "65742d636f6f6b69650000000a6b6565702d616c697665000000066f726967696e313030313031323031323032323035"
    "323036333030333032333033333034333035333036333037343032343035343036343037343038343039343130343131"
    "343132343133343134343135343136343137353032353034353035323033204e6f6e2d417574686f7269746174697665"
    "20496e666f726d6174696f6e323034204e6f20436f6e74656e74333031204d6f766564205065726d616e656e746c7934"
    "303020426164205265717565737434303120556e617574686f72697a656434303320466f7262696464656e343034204e"
    "6f7420466f756e6435303020496e7465726e616c20536572766572204572726f72353031204e6f7420496d706c656d65"
    "6e746564353033205365727669636520556e617661696c61626c654a616e20466562204d617220417072204d6179204a"
    "756e204a756c204175672053657074204f6374204e6f76204465632030303a30303a3030204d6f6e2c205475652c2057"
    "65642c205468752c204672692c205361742c2053756e2c20474d546368756e6b65642c746578742f68746d6c2c696d61"
    "67652f706e672c696d6167652f6a70672c696d6167652f6769662c6170706c69636174696f6e2f786d6c2c6170706c69"
    "636174696f6e2f7868746d6c2b786d6c2c746578742f706c61696e2c746578742f6a6176617363726970742c7075626c"
    "6963707269766174656d61782d6167653d677a69702c6465666c6174652c73646368636861727365743d7574662d3863"
    "6861727365743d69736f2d383835392d312c7574662d2c2a2c656e713d302e"
)


class ProtocolError(Exception):
    """The peer sent bytes that are not SPDY/3."""


@dataclass
class Frame:
    """One decoded frame. Control frames have `kind` > 0; data frames have `kind` == 0."""

    kind: int
    flags: int
    stream_id: int = 0
    data: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    value: int = 0  # RST_STREAM/GOAWAY status, PING id, WINDOW_UPDATE delta

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class HeaderCodec:
    """The two zlib streams of one session (one per direction)."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8,
                                         zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def decode(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as exc:
            raise ProtocolError(f"header block: {exc}") from None
        if len(raw) < 4:
            raise ProtocolError("header block too short")
        (count,), pos, out = struct.unpack_from(">I", raw), 4, {}
        for _ in range(count):
            name, pos = _string(raw, pos)
            value, pos = _string(raw, pos)
            out[name.decode("latin-1").lower()] = value.decode("latin-1")
        return out

    def encode(self, headers: dict[str, str]) -> bytes:
        raw = bytearray(struct.pack(">I", len(headers)))
        for name, value in headers.items():
            for part in (name.lower().encode("latin-1"), value.encode("latin-1")):
                raw += struct.pack(">I", len(part)) + part
        return self._deflate.compress(bytes(raw)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


def _string(raw: bytes, pos: int) -> tuple[bytes, int]:
    if pos + 4 > len(raw):
        raise ProtocolError("header block truncated")
    (size,) = struct.unpack_from(">I", raw, pos)
    end = pos + 4 + size
    if end > len(raw):
        raise ProtocolError("header block truncated")
    return raw[pos + 4:end], end


class FrameReader:
    """Reassembles frames from an arbitrary split of the byte stream."""

    def __init__(self, codec: HeaderCodec) -> None:
        self.codec = codec
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[Frame]:
        self._buf += chunk
        frames: list[Frame] = []
        while len(self._buf) >= 8:
            word, flags_len = struct.unpack_from(">II", self._buf)
            length = flags_len & 0xFFFFFF
            if len(self._buf) < 8 + length:
                break
            payload = bytes(self._buf[8:8 + length])
            del self._buf[:8 + length]
            flags = flags_len >> 24
            if word & 0x80000000:
                if (word >> 16) & 0x7FFF != VERSION:
                    raise ProtocolError(f"unsupported SPDY version {(word >> 16) & 0x7FFF}")
                frames.append(self._control(word & 0xFFFF, flags, payload))
            else:
                frames.append(Frame(0, flags, word & 0x7FFFFFFF, payload))
        return frames

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame:
        def word(at: int) -> int:
            if len(payload) < at + 4:
                raise ProtocolError(f"control frame {kind} too short")
            return struct.unpack_from(">I", payload, at)[0]

        if kind == SYN_STREAM:
            return Frame(kind, flags, word(0) & 0x7FFFFFFF, headers=self.codec.decode(payload[10:]))
        if kind in (SYN_REPLY, HEADERS):
            return Frame(kind, flags, word(0) & 0x7FFFFFFF, headers=self.codec.decode(payload[4:]))
        if kind in (RST_STREAM, WINDOW_UPDATE):
            return Frame(kind, flags, word(0) & 0x7FFFFFFF, value=word(4) & 0x7FFFFFFF)
        if kind == GOAWAY:
            return Frame(kind, flags, word(0) & 0x7FFFFFFF, value=word(4))
        if kind == PING:
            return Frame(kind, flags, value=word(0))
        return Frame(kind, flags, data=payload)  # SETTINGS and anything newer: advisory


# ------------------------------------------------------------------------------ encoding
def _control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def syn_reply(codec: HeaderCodec, stream_id: int, headers: dict[str, str] | None = None,
              *, fin: bool = False) -> bytes:
    block = codec.encode(headers or {})
    return _control(SYN_REPLY, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + block)


def syn_stream(codec: HeaderCodec, stream_id: int, headers: dict[str, str], *, fin: bool = False) -> bytes:
    """A client's SYN_STREAM (used by tests to speak to the server like client-go)."""
    block = codec.encode(headers)
    return _control(SYN_STREAM, FLAG_FIN if fin else 0, struct.pack(">IIH", stream_id, 0, 0) + block)


def data(stream_id: int, payload: bytes, *, fin: bool = False) -> bytes:
    out = bytearray()
    for start in range(0, max(len(payload), 1), MAX_DATA):
        chunk = payload[start:start + MAX_DATA]
        last = start + MAX_DATA >= len(payload)
        flags = FLAG_FIN if fin and last else 0
        out += struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(chunk)) + chunk
    return bytes(out)


def rst_stream(stream_id: int, status: int) -> bytes:
    return _control(RST_STREAM, 0, struct.pack(">II", stream_id, status))


def ping(ping_id: int) -> bytes:
    return _control(PING, 0, struct.pack(">I", ping_id))


def goaway(last_stream_id: int, status: int = 0) -> bytes:
    return _control(GOAWAY, 0, struct.pack(">II", last_stream_id, status))


__all__ = ["CANCEL", "DICTIONARY", "FLAG_FIN", "GOAWAY", "HEADERS", "PING", "RST_STREAM", "SETTINGS",
           "SYN_REPLY", "SYN_STREAM", "WINDOW_UPDATE", "Frame", "FrameReader", "HeaderCodec",
           "ProtocolError", "data", "goaway", "ping", "rst_stream", "syn_reply", "syn_stream"]
