"""Astronomy Shop (OpenTelemetry demo) problems: failure flags flipped in flagd's ConfigMap
(`feature_flags`), and bad changes to a workload's env or image (`workload_changes`). The three
ITBench-AA tasks are ITBench scenarios 3, 16 and 20 among them (tag `sources`). `kubernetes`
and `network`: scheduling, admission, pod start and request-path scenarios."""
