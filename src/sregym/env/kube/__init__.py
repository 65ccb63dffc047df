"""`--backend kube`: an attempt on any cluster reached by a kubeconfig (a real cluster, or a twin
served by `sregym twin up`), with the same problems, faults, agent tools and oracles as the
in-process twin. The conductor uses these modules in place of the in-process twin and its server.
"""

from __future__ import annotations

from sregym.env.kube.target import ClusterNotReady, KubeTarget

__all__ = ["ClusterNotReady", "KubeTarget"]
