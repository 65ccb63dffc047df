"""The protobuf schema of a whole Pod, for the pods `kubectl debug` creates with its typed client.

`kubectl debug node/NAME` sends a Pod with host namespaces, a hostPath volume of the node's root
and a toleration of every taint; `kubectl debug POD --copy-to=NAME` sends a copy of a running pod's
spec (its projected service-account volume, tolerations with `tolerationSeconds`, security
contexts, probes removed; an affinity is dropped). Both arrive as `application/vnd.kubernetes.protobuf` (see `protobuf`),
so the decoder needs these messages; field numbers are those of `k8s.io/api/core/v1`'s
generated.proto. This module only extends `protobuf.SCHEMA`.
"""

from __future__ import annotations

from sregym.twin.api.kube.protobuf import SCHEMA, obj

SCHEMA["Pod"] = obj("PodSpec")
SCHEMA["PodSpec"] = {
    **SCHEMA["PodSpec"],
    12: ("hostPID", "bool"), 13: ("hostIPC", "bool"), 14: ("securityContext", "PodSecurityContext"),
    15: ("imagePullSecrets", "[]LocalObjectReference"), 18: ("affinity", "Ignore"),
    21: ("automountServiceAccountToken", "*bool"), 22: ("tolerations", "[]Toleration"),
    27: ("shareProcessNamespace", "*bool"), 30: ("enableServiceLinks", "*bool"),
    31: ("preemptionPolicy", "*string"), 34: ("ephemeralContainers", "[]EphemeralContainer"),
    35: ("setHostnameAsFQDN", "*bool"), 37: ("hostUsers", "*bool"),
}
SCHEMA["Container"] = {
    **SCHEMA["Container"],
    9: ("volumeMounts", "[]VolumeMount"), 15: ("securityContext", "SecurityContext"),
    19: ("envFrom", "[]EnvFromSource"), 24: ("restartPolicy", "*string"),
}
SCHEMA["EphemeralContainer"] = {1: ("", "inline:Container"), 2: ("targetContainerName", "string")}
SCHEMA["EnvVar"] = {**SCHEMA["EnvVar"], 3: ("valueFrom", "EnvVarSource")}
SCHEMA["EnvVarSource"] = {1: ("fieldRef", "ObjectFieldSelector"),
                          2: ("resourceFieldRef", "ResourceFieldSelector"),
                          3: ("configMapKeyRef", "KeySelector"), 4: ("secretKeyRef", "KeySelector")}
SCHEMA["KeySelector"] = {1: ("", "inline:LocalObjectReference"), 2: ("key", "string"),
                         3: ("optional", "*bool")}
SCHEMA["EnvFromSource"] = {1: ("prefix", "string"), 2: ("configMapRef", "OptionalRef"),
                           3: ("secretRef", "OptionalRef")}
SCHEMA["OptionalRef"] = {1: ("", "inline:LocalObjectReference"), 2: ("optional", "*bool")}
SCHEMA["VolumeMount"] = {1: ("name", "string"), 2: ("readOnly", "bool"), 3: ("mountPath", "string"),
                         4: ("subPath", "string"), 5: ("mountPropagation", "*string"),
                         6: ("subPathExpr", "string"), 7: ("recursiveReadOnly", "*string")}
SCHEMA["SecurityContext"] = {1: ("capabilities", "Capabilities"), 2: ("privileged", "*bool"),
                             4: ("runAsUser", "*int64"), 5: ("runAsNonRoot", "*bool"),
                             6: ("readOnlyRootFilesystem", "*bool"),
                             7: ("allowPrivilegeEscalation", "*bool"), 8: ("runAsGroup", "*int64"),
                             11: ("seccompProfile", "SeccompProfile")}
SCHEMA["Capabilities"] = {1: ("add", "[]string"), 2: ("drop", "[]string")}
SCHEMA["SeccompProfile"] = {1: ("type", "string"), 2: ("localhostProfile", "*string")}
SCHEMA["PodSecurityContext"] = {4: ("runAsNonRoot", "*bool"), 2: ("runAsUser", "*int64"),
                                5: ("supplementalGroups", "[]int64"), 6: ("runAsGroup", "*int64"),
                                7: ("fsGroup", "*int64"), 10: ("seccompProfile", "SeccompProfile")}
SCHEMA["Toleration"] = {1: ("key", "string"), 2: ("operator", "string"), 3: ("value", "string"),
                        4: ("effect", "string"), 5: ("tolerationSeconds", "*int64")}
SCHEMA["Volume"] = {1: ("name", "string"), 2: ("", "inline:VolumeSource")}
SCHEMA["VolumeSource"] = {1: ("hostPath", "HostPathVolumeSource"), 2: ("emptyDir", "EmptyDirVolumeSource"),
                          6: ("secret", "SecretVolumeSource"),
                          10: ("persistentVolumeClaim", "PVCVolumeSource"),
                          19: ("configMap", "ConfigMapVolumeSource"),
                          26: ("projected", "ProjectedVolumeSource")}
SCHEMA["HostPathVolumeSource"] = {1: ("path", "string"), 2: ("type", "*string")}
SCHEMA["EmptyDirVolumeSource"] = {1: ("medium", "string"), 2: ("sizeLimit", "Quantity")}
SCHEMA["SecretVolumeSource"] = {1: ("secretName", "string"), 2: ("items", "[]KeyToPath"),
                                3: ("defaultMode", "*int32"), 4: ("optional", "*bool")}
SCHEMA["PVCVolumeSource"] = {1: ("claimName", "string"), 2: ("readOnly", "bool")}
SCHEMA["ConfigMapVolumeSource"] = {1: ("", "inline:LocalObjectReference"), 2: ("items", "[]KeyToPath"),
                                   3: ("defaultMode", "*int32"), 4: ("optional", "*bool")}
SCHEMA["KeyToPath"] = {1: ("key", "string"), 2: ("path", "string"), 3: ("mode", "*int32")}
SCHEMA["ProjectedVolumeSource"] = {1: ("sources", "[]VolumeProjection"), 2: ("defaultMode", "*int32")}
SCHEMA["VolumeProjection"] = {1: ("secret", "SecretProjection"), 2: ("downwardAPI", "DownwardAPIProjection"),
                              3: ("configMap", "ConfigMapProjection"),
                              4: ("serviceAccountToken", "ServiceAccountTokenProjection")}
SCHEMA["SecretProjection"] = {1: ("", "inline:LocalObjectReference"), 2: ("items", "[]KeyToPath"),
                              4: ("optional", "*bool")}
SCHEMA["ConfigMapProjection"] = SCHEMA["SecretProjection"]
SCHEMA["DownwardAPIProjection"] = {1: ("items", "[]DownwardAPIVolumeFile")}
SCHEMA["DownwardAPIVolumeFile"] = {1: ("path", "string"), 2: ("fieldRef", "ObjectFieldSelector"),
                                   3: ("resourceFieldRef", "ResourceFieldSelector"), 4: ("mode", "*int32")}
SCHEMA["ObjectFieldSelector"] = {1: ("apiVersion", "string"), 2: ("fieldPath", "string")}
SCHEMA["ResourceFieldSelector"] = {1: ("containerName", "string"), 2: ("resource", "string"),
                                   3: ("divisor", "Quantity")}
SCHEMA["ServiceAccountTokenProjection"] = {1: ("audience", "string"), 2: ("expirationSeconds", "*int64"),
                                           3: ("path", "string")}
