"""What the workload controllers share: pod predicates and owner index (`shared`), kube-scheduler's
plugins (`placement`), persistent storage as every controller sees it (`volumes`) and kubectl's
client-side rollout commands (`rollout`).
"""
