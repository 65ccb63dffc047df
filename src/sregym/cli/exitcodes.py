"""Exit codes of the `sregym` commands, one meaning each, the same in every command.

A script driving sregym (CI, a batch system) must tell "the agent scored low" (0: the run itself
worked) from "the run is incomplete" and from "the machine is not set up" without parsing text.
"""

from __future__ import annotations

OK = 0  # ran to the end; every attempt was scored (whatever the agent scored)
FAILED = 1  # a check failed (`sregym check`), or the run is incomplete (attempts missing)
USAGE = 2  # a bad argument or input: nothing ran
ENVIRONMENT = 3  # the environment is broken: a prerequisite is missing, or attempts were environment failures
INTERRUPTED = 130  # Ctrl-C or SIGTERM: what finished is kept; resume to finish

__all__ = ["ENVIRONMENT", "FAILED", "INTERRUPTED", "OK", "USAGE"]
