"""The suite's grouping hooks (`tests/conftest.py`) keep a module-scoped fixture on one xdist worker,
also when the parameter ids contain "@" (family variant ids such as `demo-shop/x-v1@key=value`).

A real `pytest -n 2 --dist loadgroup` runs a small module whose module-scoped fixture writes one
line per build; the fixture must be built once. Before the hook read "@" inside the parameters as
a group suffix, each such test was a group of its own and the fixture was built on both workers.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

MODULE = textwrap.dedent('''
    import os
    import pytest

    @pytest.fixture(scope="module")
    def built():
        with open(os.environ["BUILD_LOG"], "a") as log:
            log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")

    @pytest.mark.parametrize("variant", [f"app/problem-v1@key={i}" for i in range(8)])
    def test_variant(built, variant):
        assert "@" in variant
''')


def test_a_module_fixture_with_at_signs_in_its_ids_is_built_once_under_loadgroup(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "test_variants.py").write_text(MODULE)
    log = tmp_path / "builds.log"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-p",
                           "no:cacheprovider", "-p", "no:benchmark", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env={**_env(), "BUILD_LOG": str(log)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "8 passed" in proc.stdout
    assert len(log.read_text().splitlines()) == 1, log.read_text()


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
