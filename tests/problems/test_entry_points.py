"""Third-party packages register problems through the `sregym.problems` entry-point group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PACKAGE = '''
from sregym.problems.registry import get_problem, problem


@problem
def acme_selector():
    """Acme's variant of the selector problem, shipped as an installed package."""
    base = get_problem("demo-shop/service-selector-mismatch-v1")
    return base.model_copy(update={"id": "demo-shop/acme-selector-v1", "card": ""})
'''


def test_installed_package_problems_are_discovered(tmp_path: Path) -> None:
    (tmp_path / "acme_problems").mkdir()
    (tmp_path / "acme_problems" / "__init__.py").write_text(PACKAGE)
    dist = tmp_path / "acme_problems-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-problems\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[sregym.problems]\nacme = acme_problems\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    code = ("from sregym.problems.registry import all_problem_ids, get_problem\n"
            "ids = all_problem_ids()\n"
            "print('demo-shop/acme-selector-v1' in ids)\n"
            "print(get_problem('demo-shop/acme-selector-v1').card)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["True", "Acme's variant of the selector problem, shipped as an installed package."]
