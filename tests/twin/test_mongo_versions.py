"""Which mongod release opens which data files (featureCompatibilityVersion), and the fatal lines
and exit code of one that cannot."""

from __future__ import annotations

import json

from sregym.twin.datastores.mongo_versions import (
    EXIT_NEED_UPGRADE,
    accepted_fcvs,
    incompatible_data,
    mongod_version,
    release_of,
)
from sregym.twin.datastores.mongodb import MongoState


def test_releases_and_accepted_fcvs() -> None:
    assert release_of("8.0.14-rc0") == "8.0" and release_of("4.4.6") == "4.4"
    assert accepted_fcvs("8.0.14-rc0") == ("7.0", "8.0")
    assert accepted_fcvs("5.0.31") == ("4.4", "5.0")
    pod = {"spec": {"containers": [{"name": "db", "image": "docker.io/library/mongo:8.0.14-rc0"},
                                   {"name": "side", "image": "busybox:1.36"}]}}
    assert mongod_version(pod, "db") == "8.0.14-rc0"
    assert mongod_version({"spec": {"containers": [{"name": "db", "image": "mongo:latest"}]}}, "db") == "4.4.6"


def test_data_files_open_one_release_up_but_not_four() -> None:
    state = MongoState(version="4.4.6")
    assert incompatible_data(state, "4.4.6", "2026-01-01T00:00:00.000+00:00") is None
    assert state.fcv == "4.4"  # the data directory keeps the FCV of the binary that wrote it
    assert incompatible_data(state, "5.0.31", "2026-01-01T00:00:00.000+00:00") is None
    refused = incompatible_data(state, "8.0.14-rc0", "2026-01-01T00:00:00.000+00:00")
    assert refused is not None
    lines, code = refused
    assert code == EXIT_NEED_UPGRADE == 62
    fatal = json.loads(next(line for line in lines if '"s":"F"' in line))
    assert fatal["id"] == 20573 and fatal["msg"] == "Wrong mongod version"
    assert fatal["attr"]["error"].startswith("UPGRADE_PROBLEM: Found an invalid featureCompatibilityVersion document")
    assert "expected '7.0' or '8.0'" in fatal["attr"]["error"]
    assert json.loads(lines[-1])["attr"] == {"exitCode": 62}
    # A newer data directory is refused by an older binary too.
    assert incompatible_data(MongoState(version="7.0.2"), "4.4.6", "2026-01-01T00:00:00.000+00:00") is not None
