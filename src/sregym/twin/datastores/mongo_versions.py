"""Which mongod binary can open which data files: the featureCompatibilityVersion rule.

A MongoDB data directory records the feature compatibility version (FCV) it was written under, in
`admin.system.version` (`{_id: "featureCompatibilityVersion", version: "4.4"}`). A mongod binary
accepts only its own release's FCV and the previous release's, so upgrades must go one release at
a time (4.4 -> 5.0 -> 6.0 -> 7.0 -> 8.0) and the FCV must be raised between them. A binary that finds
another FCV refuses to start: it logs the fatal `Wrong mongod version` (id 20573) with the
`UPGRADE_PROBLEM` text and exits with code 62 (`EXIT_NEED_UPGRADE`). A deployment whose image is
moved several releases ahead of its volume therefore crash-loops, while the same data opens fine
under the old image or the next release's.

The FCV lives in `MongoState.fcv` (on the volume, so it survives pod replacement); a fresh data
directory gets the FCV of the binary that initialised it, and nothing here raises it later (as
on a real server, only `setFeatureCompatibilityVersion` would).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.datastores.mongodb import MongoState

# Releases in upgrade order; each binary reads its own FCV and the one before it.
RELEASES = ("3.6", "4.0", "4.2", "4.4", "5.0", "6.0", "7.0", "8.0")
EXIT_NEED_UPGRADE = 62
DEFAULT_VERSION = "4.4.6"


def release_of(version: str) -> str:
    """`8.0.14-rc0` -> `8.0`: the release a binary (or a data directory's writer) belongs to."""
    parts = version.split("-", 1)[0].split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def accepted_fcvs(version: str) -> tuple[str, ...]:
    """The FCVs a binary of `version` starts on: its release's and the previous release's."""
    release = release_of(version)
    if release not in RELEASES:
        return (release,)
    index = RELEASES.index(release)
    return tuple(RELEASES[max(0, index - 1):index + 1])


def mongod_version(pod: dict[str, Any], container: str) -> str:
    """The mongod version a container runs: its image tag (`mongo:8.0.14-rc0`)."""
    for spec in (pod.get("spec") or {}).get("containers") or []:
        if spec.get("name") == container:
            image = str(spec.get("image") or "")
            tail = image.rsplit("/", 1)[-1]
            if ":" in tail:
                tag = tail.rsplit(":", 1)[-1]
                if tag and tag[0].isdigit():
                    return tag
    return DEFAULT_VERSION


def incompatible_data(state: MongoState, version: str, date: str) -> tuple[list[str], int] | None:
    """None when a mongod of `version` can open `state`; otherwise its log lines and exit code."""
    if not state.fcv:
        state.fcv = release_of(state.version)
    accepted = accepted_fcvs(version)
    if state.fcv in accepted:
        return None
    oldest = accepted[0]
    notes = f"https://docs.mongodb.com/master/release-notes/{oldest}-compatibility/#feature-compatibility"
    expected = " or ".join(f"'{v}'" for v in accepted)
    error = (f"UPGRADE_PROBLEM: Found an invalid featureCompatibilityVersion document (ERROR: Location4926900: "
             f"Invalid featureCompatibilityVersion document in admin.system.version: "
             f'{{ _id: "featureCompatibilityVersion", version: "{state.fcv}" }}. See {notes}. :: caused by :: '
             f"Invalid feature compatibility version value '{state.fcv}'; expected {expected}. See {notes}.). "
             f"If the current featureCompatibilityVersion is below {oldest}, see the documentation on upgrading "
             f"at https://docs.mongodb.com/master/release-notes/{oldest}/#upgrade-procedures.")

    def entry(severity: str, ident: int, msg: str, attr: dict[str, Any] | None = None) -> str:
        head = (f'{{"t":{{"$date":"{date}"}},"s":"{severity}",  "c":"CONTROL",  "id":{ident},'
                f'   "ctx":"initandlisten","msg":"{msg}"')
        return head + (f',"attr":{json.dumps(attr, separators=(",", ":"))}' if attr else "") + "}"

    lines = [
        entry("I", 4615611, "MongoDB starting", {"pid": 1, "port": 27017, "dbPath": "/data/db",
                                                 "architecture": "64-bit"}),
        entry("I", 23403, "Build Info", {"buildInfo": {"version": version}}),
        entry("F", 20573, "Wrong mongod version", {"error": error}),
        entry("I", 20565, "Now exiting"),
        entry("I", 23138, "Shutting down", {"exitCode": EXIT_NEED_UPGRADE}),
    ]
    return lines, EXIT_NEED_UPGRADE
