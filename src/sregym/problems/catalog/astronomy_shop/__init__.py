"""Astronomy Shop (OpenTelemetry demo) problems: failure flags flipped in flagd's ConfigMap
(`feature_flags`), bad changes to a workload's env or image (`workload_changes`), changes to
the backing stores Valkey, PostgreSQL and Kafka (`datastores`), and scheduling, admission, pod start
and request-path scenarios (`kubernetes`, `network`), and retry storms that outlive a short trigger
(`metastable`), and what a workload is given: rotated credentials, container resources, its node's
kubelet configuration (`node_and_secrets`), and the edge proxy's request-filter rule
(`edge_filter`) and route timeout (`edge_routes`). The three ITBench-AA tasks are ITBench
scenarios 3, 16 and 20 among them (tag `sources`)."""
