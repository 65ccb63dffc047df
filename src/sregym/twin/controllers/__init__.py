"""Controllers: one module per Kubernetes behaviour, each registered with `@controller`.

The twin runs every registered controller once per tick, in ascending `order` (ties by name).
This table is the tick order; tests/twin/test_controller_order.py checks it against
`CONTROLLERS.entries()` row by row, so a change on either side must change both.

    order  controller                 what it does
        1  customresourcedefinitions  establish CRD kinds
        3  leases                     node, leader-election and API server identity leases
        4  node-status                node status heartbeats
        5  node-lifecycle             node health from heartbeats, taints from conditions
        6  taint-eviction             NoExecute taints evict pods (tolerationSeconds)
       10  garbage-collector          owner references, namespaces, service accounts
       12  csrcleaner                 delete issued kubelet CSRs after an hour
       20  cronjob                    CronJob schedules
       25  job                        Job pods and completion
       30  deployment                 rollouts
       35  replicaset                 ReplicaSet pods
       40  statefulset                StatefulSet pods and claims
       45  daemonset                  DaemonSet pods
       50  hpa                        horizontal pod autoscaling
       55  persistentvolume-binder    PV/PVC binding and provisioning
       60  scheduler                  pod placement
       64  nodeos                     node OS: conntrack, disks, clock (twin/chaos)
       65  chaos-mesh                 Chaos Mesh experiments (twin/chaos)
       66  eviction-manager           kubelet node pressure, evictions, restart status
       70  kubelet                    pod lifecycle, probes, container runtime
       75  attachdetach-controller    volume attach/detach
       80  endpoints                  Endpoints and EndpointSlices
       84  ingress-nginx              Ingress rules into ingress-nginx's routes, certificates, reloads, access log (twin/ingress)
       85  dataplane                  traffic, the fluid model (twin/dataplane)
       85  disruption                 PodDisruptionBudget status
       86  datastores                 backing stores' warm-up and usage
       86  envoy-proxies              Envoy programs' router replay: access log, stats (dataplane/envoy.py)
       90  resourcequota              ResourceQuota status
       95  telemetry-scraper          scrape every exporter into the TSDB (twin/telemetry)
       96  alerting                   alert rule evaluation (twin/telemetry)

Controllers that live with their subsystem (`twin/chaos`, `twin/dataplane`, `twin/ingress`, `twin/telemetry`)
decorate themselves with `@controller`; `sregym.twin.controller.CONTROLLER_MODULES` lists their
modules next to this package, so discovery imports exactly those.
"""
