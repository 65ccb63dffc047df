"""The load-generator model apps parameterise, and the generators that run it in the cluster.

An app names one load generator in its `AppSpec.load`:

- `OpenLoop` (wrk2): a constant arrival rate whatever the latency, a weighted mix of request
  classes. Requests keep arriving while the app slows down, so queues build up (`wrk2.py`).
- `ClosedLoop` (Locust): `users` simulated users, started at `spawn_rate` per second; each runs
  weighted tasks, a task being a sequence of requests sent one after another, then waits
  `think_time_s`. A user sends its next request only when the previous one has answered, so when
  the app gets slower the offered load drops (`locust.py`).

Both run as a Deployment in the hidden `sregym-system` namespace (named `sregym-loadgen`,
annotated with the app's name) from an image the app pushes with its own images; the twin's data
plane turns the running process into traffic (`twin/dataplane/loadgen.py`, `locust.py`).
"""

from __future__ import annotations

from sregym.apps.loadgen.model import ClosedLoop, OpenLoop, Request, RequestClass, Task, Workload

__all__ = ["ClosedLoop", "OpenLoop", "Request", "RequestClass", "Task", "Workload"]
