"""Controllers: one module per Kubernetes behaviour, each registered with `@controller`.

The twin runs every registered controller once per tick, in ascending `order`:

     1  CRDs (establish kinds)       3  leases (node, leader election, API server identity)
     4  node status heartbeats      10  garbage collection / namespaces / service accounts
    20  cronjob   25 job   30 deployment   35 replicaset   40 statefulset   45 daemonset
    50  hpa       55 pvc/pv binding   60 scheduler
    64  node OS (conntrack, disks)    65 Chaos Mesh experiments
    70  kubelet   75 volume attach/detach   80 endpoints / endpointslices
    85  data plane (fluid model)      86 datastores   90 resourcequota status
    95  telemetry scrape              96 alert rule evaluation

Controllers that live with their subsystem (`twin/chaos`, `twin/dataplane`, `twin/telemetry`) are
registered by a short module here that imports them, so discovery stays one package.
"""
