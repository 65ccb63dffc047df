"""What a database's disk does to its requests: slow IO, failing IO, corrupt pages, a full disk.

MongoDB and PostgreSQL call `disk_effects(store, mount, op, rate, service_ms, ...)` once per class
of requests and tick (after authorization, before answering). It

- counts the requests' block IO on the device behind the data volume (`chaos.diskio`), so
  node-exporter and `/proc/diskstats` move with the load the database serves;
- adds an IOChaos `latency` to each request and logs what the servers log for slow operations:
  mongod 4.4's structured `"msg":"Slow query"` (id 51803) with `durationMillis` and the storage
  section (`bytesRead`, `timeReadingMicros`) beyond `--slowms` (default 100), PostgreSQL's
  `LOG:  duration: 1234.567 ms  statement: ...` when `log_min_duration_statement` is set (`-c
  log_min_duration_statement=...` on the command line, as images are configured);
- fails a share of the requests for an IOChaos `fault` (errno) or `attrOverride` that takes the
  owner's read/write permission away (EACCES);
- for `mistake` (reads come back with filled or zeroed bytes) reports the servers' checksum
  errors: WiredTiger's `read checksum error` and fatal assertion (mongod aborts, exit 134),
  PostgreSQL's `invalid page in block N of relation base/16384/16385`;
- refuses writes on a full filesystem (no space or no inodes, `chaos.nodeos`): WiredTiger's
  `No space left on device` and fatal assertion, PostgreSQL's `could not extend file ...: No space
  left on device`; writes that fit take their space on the node's disk.

Returns the service time and, when some requests fail, the `DbOutcome` to answer with.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos.kernel import syscall_fault
from sregym.twin.datastores.base import DbOutcome
from sregym.twin.machinery.objects import get_path

if TYPE_CHECKING:
    from sregym.twin.datastores.base import DataStore

SLOWMS = 100.0
WRITE_OPS = frozenset({"insert", "update", "delete", "seed", "findAndModify"})
ABORT_EXIT_CODE = 134  # SIGABRT after fassert()
PG_RELATION = "base/16384/16385"
DOC_BYTES = 256


def disk_effects(store: DataStore, mount: str, op: str, rate: float, service_ms: float, *,
                 db: str = "", collection: str = "", statement: str = "") -> tuple[float, DbOutcome | None]:
    service_ms, failure = _effects(store, mount, op, rate, service_ms, db, collection, statement)
    return service_ms, (replace(failure, service_ms=service_ms) if failure is not None else None)


# `chaos.diskio.diskio_of`, bound on first use (a module-level import would be a cycle): every
# store call of every tick asks for it.
_DISKIO_OF: Any = None


def _effects(store: DataStore, mount: str, op: str, rate: float, service_ms: float, db: str, collection: str,
             statement: str) -> tuple[float, DbOutcome | None]:
    global _DISKIO_OF
    if _DISKIO_OF is None:
        from sregym.twin.chaos.diskio import diskio_of

        _DISKIO_OF = diskio_of
    diskio_of = _DISKIO_OF
    effect = store.io_effect(mount)
    action = str(getattr(effect, "action", "") or "") if effect is not None else ""
    latency = float(getattr(effect, "latency_ms", 0.0) or 0.0) if action == "latency" else 0.0
    writing = op in WRITE_OPS
    if rate > 0:
        diskio_of(store.twin).record(store.pod, mount, op=op, rate=rate, latency_ms=latency,
                                     container=store.container)
    service_ms += latency
    mongo = store.kind == "mongodb"
    share = max(0.0, min(1.0, float(getattr(effect, "percent", 100) or 100) / 100.0)) if effect else 0.0
    if writing and rate > 0 and _full(store, mount):
        return service_ms, (_mongo_enospc(store) if mongo else _pg_enospc(store, statement))
    if writing and rate > 0:
        _take_space(store, mount, int(rate * store.twin.clock.tick * DOC_BYTES))
    if action == "mistake" and not writing and share > 0:
        return service_ms, (_mongo_checksum(store, mount, share) if mongo else _pg_invalid_page(store, share))
    errno = int(getattr(effect, "errno", 0) or 0) if effect is not None else 0
    kernel = syscall_fault(store.twin, store.pod, store.container, "write" if writing else "read")
    if not errno and kernel is not None and rate > 0:
        errno, share = kernel
    if action == "attrOverride" and _denied(getattr(effect, "attr", {}) or {}):
        errno = 13
    if errno and share > 0:
        return service_ms, _failed(store, mount, errno, share, mongo, writing)
    if rate > 0 and service_ms > 0:
        if mongo:
            _mongo_slow(store, op, db, collection, service_ms, latency)
        else:
            _pg_slow(store, statement or _statement(op, collection), service_ms)
    return service_ms, None


# ---------------------------------------------------------------------------------- space
def _disk(store: DataStore, mount: str) -> Any:
    from sregym.twin.chaos.nodeos import nodeos_of

    node = get_path(store.pod, "spec", "nodeName")
    if not node:
        return None
    nodeos = nodeos_of(store.twin)
    return nodeos.disk(str(node), nodeos.volume_device(store.pod, mount, store.container))


def _full(store: DataStore, mount: str) -> bool:
    disk = _disk(store, mount)
    return disk is not None and (disk.avail_bytes <= 0 or disk.inodes_free <= 0)


def _take_space(store: DataStore, mount: str, nbytes: int) -> None:
    disk = _disk(store, mount)
    if disk is not None and nbytes > 0:
        disk.used_bytes = min(disk.size_bytes, disk.used_bytes + nbytes)


def _denied(attr: dict[str, Any]) -> bool:
    perm = attr.get("perm")
    return perm is not None and (int(perm) & 0o600) != 0o600


# ------------------------------------------------------------------------------- failures
def _failed(store: DataStore, mount: str, errno: int, share: float, mongo: bool, writing: bool) -> DbOutcome:
    import os

    text = os.strerror(errno)
    code = {5: "EIO", 13: "EACCES", 28: "ENOSPC"}.get(errno, "EIO")
    if mongo:
        store.log("STORAGE", 22435, "WiredTiger error",  # type: ignore[attr-defined]
                  {"error": errno, "message": text}, key=f"errno{errno}", severity="E")
        return DbOutcome(share < 1.0, code, f"(InternalError) WiredTiger error ({errno}) [{mount}: "
                         f"{'write' if writing else 'read'} error]: {text}", 0.3, None, share)
    verb = "write" if writing else "read"
    return DbOutcome(share < 1.0, code, f'pq: could not {verb} block 0 in file "{PG_RELATION}": {text}',
                     0.3, None, share)


def _abort(store: DataStore) -> None:
    """mongod's fassert(): the process aborts; the kubelet sees exit code 134."""
    from sregym.twin.chaos.actions import kill_container

    if kill_container(store.twin, store.namespace, store.pod_name, store.container):
        from sregym.twin.node.runtime import runtime_of

        instance = runtime_of(store.twin).instance(store.namespace, store.pod_name, store.container)
        if instance is not None:
            instance.stop_exit_code = ABORT_EXIT_CODE
            instance.kill_reason = "error"


def _fatal(store: DataStore, msgid: int, file: str, line: int) -> None:
    store.log("-", 23089, "Fatal assertion",  # type: ignore[attr-defined]
              {"msgid": msgid, "file": file, "line": line}, key=None, severity="F")
    store.log("-", 23090, "\\n\\n***aborting after fassert() failure\\n\\n", {}, key=None,  # type: ignore[attr-defined]
              severity="F")
    _abort(store)


def _mongo_checksum(store: DataStore, mount: str, share: float) -> DbOutcome:
    wt = f"collection-{7 + len(store.pod_name) % 5}--2841374960325631047.wt"
    offset = 4096 * (3 + int(store.twin.clock.now) % 61)
    store.log("STORAGE", 22435, "WiredTiger error", {  # type: ignore[attr-defined]
        "error": 0, "message": f"[{int(store.twin.clock.now)}:{int(store.twin.clock.now * 1e6) % 1000000}][1:"
        f"0x7f3c2d7fe700], file:{wt}, WT_CURSOR.search: __wt_block_read_off, 283: {wt}: read checksum error "
        f"for 4096B block at offset {offset}: block header checksum of 0x0 doesn't match expected checksum of "
        f"0x{(offset * 2654435761) % (1 << 32):x}"}, key=None, severity="E")
    store.log("STORAGE", 22435, "WiredTiger error", {  # type: ignore[attr-defined]
        "error": -31802, "message": f"[{int(store.twin.clock.now)}:0][1:0x7f3c2d7fe700], file:{wt}, "
        f"WT_CURSOR.search: __wt_bm_corrupt_dump, 135: {{{offset}, 4096, 0x0}}: (chunk 1 of 4): 00 00 00 00 00 "
        "00 00 00 00 00 00 00 00 00 00 00"}, key=None, severity="E")
    _fatal(store, 50853, "src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp", 519)
    return DbOutcome(False, "EIO", "connection(mongodb:27017[-3]) incomplete read of message header: EOF",
                     0.3, None, 1.0)


def _mongo_enospc(store: DataStore) -> DbOutcome:
    now = store.twin.clock.now
    store.log("STORAGE", 22435, "WiredTiger error", {  # type: ignore[attr-defined]
        "error": 28, "message": f"[{int(now)}:{int(now * 1e6) % 1000000}][1:0x7f3c2d7fe700], "
        "file:journal/WiredTigerLog.0000000002, WT_SESSION.log_flush: __posix_file_write, 615: "
        "/data/db/journal/WiredTigerLog.0000000002: handle-write: pwrite: failed to write 128 bytes at offset "
        f"{(int(now) * 4096) % (100 << 20)}: No space left on device"}, key=None, severity="E")
    _fatal(store, 28559, "src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp", 64)
    return DbOutcome(False, "ENOSPC", "(InternalError) WiredTiger error (28) [/data/db: write error]: "
                     "No space left on device", 0.3, None, 1.0)


def _pg_enospc(store: DataStore, statement: str) -> DbOutcome:
    message = f'could not extend file "{PG_RELATION}": No space left on device'
    store.log("ERROR", message, "enospc", [("HINT", "Check free disk space."),  # type: ignore[attr-defined]
                                           ("STATEMENT", statement or "INSERT ...")])
    return DbOutcome(False, "ENOSPC", f"pq: {message}", 0.3, None, 1.0)


def _pg_invalid_page(store: DataStore, share: float) -> DbOutcome:
    block = 1 + int(store.twin.clock.now) % 40
    message = f"invalid page in block {block} of relation {PG_RELATION}"
    store.log("ERROR", message, "invalid-page", [])  # type: ignore[attr-defined]
    return DbOutcome(share < 1.0, "EIO", f"pq: {message}", 0.3, None, share)


# ---------------------------------------------------------------------------- slow logs
def _mongo_slow(store: DataStore, op: str, db: str, collection: str, service_ms: float, latency: float) -> None:
    slowms = float(store.config.get("slowms") or SLOWMS)
    if service_ms <= slowms:
        return
    command = {"seed": "insert"}.get(op, op)
    attr: dict[str, Any] = {
        "type": "command", "ns": f"{db}.{collection}",
        "command": {command: collection, "lsid": {"id": {"$uuid": "5f6c3a5e-4d0e-4a4e-9b7f-2f5c1e0b8a11"}},
                    "$db": db},
        "numYields": 0, "reslen": 245,
        "locks": {"Global": {"acquireCount": {"r": 1}}, "Database": {"acquireCount": {"r": 1}},
                  "Collection": {"acquireCount": {"r": 1}}},
        "storage": {"data": {"bytesRead": 16384, "timeReadingMicros": int(latency * 1000)}} if latency else {},
        "protocol": "op_msg", "durationMillis": int(service_ms)}
    if not attr["storage"]:
        del attr["storage"]
    store.log("COMMAND", 51803, "Slow query", attr, key=f"slow:{db}.{collection}:{op}")  # type: ignore[attr-defined]


def _statement(op: str, table: str) -> str:
    table = table or "t"
    return {"insert": f"INSERT INTO {table} VALUES ($1, $2)", "update": f"UPDATE {table} SET v = $1 WHERE id = $2",
            "delete": f"DELETE FROM {table} WHERE id = $1", "count": f"SELECT count(*) FROM {table}"}.get(
        op.lower(), f"SELECT * FROM {table} WHERE id = $1")


def _pg_slow(store: DataStore, statement: str, service_ms: float) -> None:
    threshold = store.config.get("log_min_duration_statement")
    if threshold is None or float(threshold) < 0 or service_ms < float(threshold):
        return
    store.log("LOG", f"duration: {service_ms:.3f} ms  statement: {statement}",  # type: ignore[attr-defined]
              f"slow:{statement}", [])


def pg_min_duration(argv: list[str], conf: str = "") -> float | None:
    """`log_min_duration_statement` in ms from `-c name=value` arguments or postgresql.conf text
    (`250ms`, `1s`, `-1` = off)."""
    value = None
    for line in conf.splitlines():
        key, _, rest = line.partition("=")
        if key.strip() == "log_min_duration_statement":
            value = rest.split("#", 1)[0].strip().strip("'")
    for index, arg in enumerate(argv):
        text = argv[index + 1] if arg == "-c" and index + 1 < len(argv) else arg[2:] if arg.startswith("-c") else ""
        if text.startswith("log_min_duration_statement="):
            value = text.split("=", 1)[1]
    if value is None:
        return None
    for suffix, scale in (("ms", 1.0), ("s", 1000.0), ("min", 60000.0)):
        if value.endswith(suffix) and value[:-len(suffix)].strip().lstrip("-").isdigit():
            return float(value[:-len(suffix)]) * scale
    try:
        return float(value)
    except ValueError:
        return None




def journal_failure(store: DataStore, call: str, errno: int) -> None:
    import os

    now = store.twin.clock.now
    journal = "/data/db/journal/WiredTigerLog.0000000001"
    where = (f"__posix_sync, 99: {journal}: handle-sync: fdatasync" if call == "fsync" else
             f"__posix_file_write, 615: {journal}: handle-write: pwrite: failed to write 128 bytes at offset 4096")
    store.log("STORAGE", 22435, "WiredTiger error", {  # type: ignore[attr-defined]
        "error": errno, "message": f"[{int(now)}:{int(now * 1e6) % 1000000}][1:0x7f3c2d7fe700], "
        f"WT_SESSION.log_flush: {where}: {os.strerror(errno)}"}, key=None, severity="E")
    _fatal(store, 50853, "src/mongo/db/storage/wiredtiger/wiredtiger_util.cpp", 519)


__all__ = ["disk_effects", "journal_failure", "pg_min_duration"]
