"""The shared warm Astronomy Shop twin (`support.astro_twin`): one build per process and key for
read-only modules, refused once someone advanced it; a module's own twin is a separate build."""

from __future__ import annotations

import pytest

from support.astro_twin import SharedTwinChanged, warm_astro_twin

pytestmark = pytest.mark.xdist_group("astro_twin_support")


def test_read_only_twin_is_built_once_and_ready() -> None:
    twin = warm_astro_twin(shared=True)
    assert warm_astro_twin(shared=True) is twin
    assert twin.clock.now >= 120
    pods = twin.list("pods", "astronomy-shop")
    assert pods and all(s["ready"] for p in pods for s in p["status"]["containerStatuses"])


def test_an_advanced_shared_twin_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard, on a small stand-in key so the real shared twin stays untouched."""
    import support.astro_twin as module

    built = []

    class Clock:
        now = 5.0

    class Stub:
        clock = Clock()

    monkeypatch.setattr(module, "build_astro_twin", lambda seed, advance_s: built.append(seed) or Stub())
    stub = warm_astro_twin(seed=-1, advance_s=5, shared=True)
    assert warm_astro_twin(seed=-1, advance_s=5) is not stub and built == [-1, -1]  # own twin: a new build
    stub.clock.now = 10.0
    with pytest.raises(SharedTwinChanged):
        warm_astro_twin(seed=-1, advance_s=5, shared=True)
    module._SHARED.pop((-1, 5.0))

