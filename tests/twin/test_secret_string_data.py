"""Secrets: the API server folds write-only `stringData` into base64 `data`."""

from __future__ import annotations

import base64

from sregym.twin import Twin


def test_string_data_is_folded_into_data_and_wins() -> None:
    twin = Twin(seed=1)
    twin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "default"},
                "data": {"user": base64.b64encode(b"old").decode()},
                "stringData": {"user": "admin", "password": "s3cret"}})
    secret = twin.get("secrets", "default", "db")
    assert "stringData" not in secret
    assert base64.b64decode(secret["data"]["user"]) == b"admin"
    assert base64.b64decode(secret["data"]["password"]) == b"s3cret"
    # An update through stringData rotates the stored value too.
    twin.patch("secrets", "default", "db", {"stringData": {"password": "rotated"}}, patch_type="merge")
    assert base64.b64decode(twin.get("secrets", "default", "db")["data"]["password"]) == b"rotated"
