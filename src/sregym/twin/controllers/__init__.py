"""Controllers: one module per Kubernetes behaviour, each registered with `@controller`.

The twin runs every registered controller once per tick, in ascending `order`. Orders leave gaps so
new controllers slot in without renumbering:

    10  garbage collection / namespace lifecycle
    20  cronjob            25 job               30 deployment        35 replicaset
    40  statefulset        45 daemonset         50 hpa               55 pvc/pv binding
    60  scheduler          70 kubelet           75 volume attach     80 endpoints / endpointslices
    90  resourcequota status
"""
