"""Cohen's κ of the diagnosis judges against the labelled set in `tests/data/judge/`.

    python benchmarks/judge_agreement.py                       # the deterministic judge
    python benchmarks/judge_agreement.py --base-url URL --model M   # and the LLM judge

The same as `sregym judge-eval` (all its options apply): κ per checklist question and pooled over
every answer, raw agreement, on the whole set, the development problems, the held-out problems
(the split in `tests/data/judge/split.json`) and the hand-written items alone.
"""

from __future__ import annotations

import sys

from sregym.cli.main import app

if __name__ == "__main__":
    app(["judge-eval", *sys.argv[1:]])
