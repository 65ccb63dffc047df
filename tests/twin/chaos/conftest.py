"""Shared fixtures for the chaos tests: a twin with a small web app, and the API-server harness
of tests/twin/api (loaded by path: test directories are not packages)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sregym.twin import Twin
from support.chaos_web import WEB, ready_pods

_spec = importlib.util.spec_from_file_location("sregym_api_conftest",
                                               Path(__file__).parents[1] / "api" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_api)
kube = _api.kube

@pytest.fixture
def twin() -> Twin:
    from sregym.twin.chaos import install_chaos_mesh

    t = Twin(seed=11)
    install_chaos_mesh(t)
    t.apply(WEB)
    assert t.settle(60, until=lambda: len(ready_pods(t)) == 4)
    return t
