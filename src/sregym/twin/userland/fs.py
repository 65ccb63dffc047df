"""The filesystem a container shows to `kubectl exec`.

An agent who runs `ls -la /etc/config`, `cat /etc/resolv.conf` or `cat
/var/run/secrets/kubernetes.io/serviceaccount/namespace` must see what a real container shows,
because that is how an on-call engineer checks which config a pod really mounted. So the tree is
built from the pod's spec and the store, the way the kubelet lays it out:

- a plausible base image tree (`/bin`, `/etc/passwd`, `/etc/os-release` ...) for the image's
  family (Debian or BusyBox/Alpine), plus files an image entry declares in
  `ImageSpec.extras["files"]` (`{path: content}`);
- the kubelet-managed `/etc/hosts`, `/etc/hostname` and `/etc/resolv.conf` (per `dnsPolicy`
  and `dnsConfig`) and `/dev/termination-log`;
- every volumeMount: ConfigMap, Secret, projected (incl. the service-account token) and
  downwardAPI volumes with the kubelet's atomic-writer layout (`..data -> ..<timestamp>`, one
  symlink per key), `subPath` mounts as single files, emptyDir/PVC/hostPath as directories;
- the service-account files under `/var/run/secrets/kubernetes.io/serviceaccount` when the
  token is automounted but no admission plugin put the projected volume into the spec.

Content is derived deterministically (tokens and certificates from hashes of uids), never from
wall time or global randomness.
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.clock import parse_time
from sregym.twin.machinery.objects import get_path
from sregym.twin.topology import CLUSTER_DNS_IP, CLUSTER_DOMAIN

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
MAX_LINK_DEPTH = 16


@dataclass
class Node:
    """One filesystem entry: a regular file, a directory or a symbolic link."""

    kind: str  # "file" | "dir" | "link"
    content: str = ""
    mode: int = 0o644
    target: str = ""
    mtime: float = 0.0
    owner: str = "root"
    group: str = "root"

    @property
    def size(self) -> int:
        if self.kind == "dir":
            return 4096
        if self.kind == "link":
            return len(self.target.encode())
        return len(self.content.encode())


class VirtualNodes(dict[str, Node]):
    """The tree's entries; paths a virtual provider claims (`/proc`, `/sys/fs/cgroup`:
    `procfiles.ProcProvider`) are computed on access when not stored."""

    provider: Any = None

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        found = super().get(key)
        if found is None and self.provider is not None and self.provider.handles(key):
            found = self.provider.node(key)
        return default if found is None else found

    def __missing__(self, key: str) -> Node:
        found = self.provider.node(key) if self.provider is not None and self.provider.handles(key) else None
        if found is None:
            raise KeyError(key)
        return found


class ContainerFS:
    """A small in-memory tree with symlinks; paths are absolute and normalised."""

    def __init__(self, mtime: float = 0.0) -> None:
        self.mtime = mtime
        self.nodes: VirtualNodes = VirtualNodes({"/": Node("dir", mode=0o755, mtime=mtime)})

    # ------------------------------------------------------------- building
    def _place(self, path: str) -> str:
        """Where a new entry at `path` really goes: its parent directory resolved through
        symlinks (`/bin/x` lands in `/usr/bin/x` on a merged-/usr image)."""
        path = normpath(path)
        parent = posixpath.dirname(path)
        if parent == path:
            return path
        real_parent = self.resolve(parent)
        if real_parent is None or self.nodes[real_parent].kind != "dir":
            self.add_dir(parent)
            real_parent = self.resolve(parent) or parent
        return normpath(posixpath.join(real_parent, posixpath.basename(path)))

    def add_dir(self, path: str, mode: int = 0o755) -> None:
        path = self._place(path)
        node = self.nodes.get(path)
        if node is None or node.kind != "dir":
            self.nodes[path] = Node("dir", mode=mode, mtime=self.mtime)
        else:
            node.mode = mode

    def add_file(self, path: str, content: str, mode: int = 0o644) -> None:
        path = self._place(path)
        self.nodes[path] = Node("file", content=content, mode=mode, mtime=self.mtime)

    def add_link(self, path: str, target: str) -> None:
        path = self._place(path)
        self.nodes[path] = Node("link", target=target, mode=0o777, mtime=self.mtime)

    def remove_tree(self, path: str) -> None:
        path = normpath(path)
        prefix = path.rstrip("/") + "/"
        for key in [k for k in self.nodes if k == path or k.startswith(prefix)]:
            if key != "/":
                del self.nodes[key]

    # -------------------------------------------------------------- reading
    def resolve(self, path: str, *, follow_last: bool = True) -> str | None:
        """The real path of `path` (symlinks in every component followed), or None when a
        component does not exist or links loop."""
        parts = [p for p in normpath(path).split("/") if p]
        current = "/"
        depth = 0
        while parts:
            part = parts.pop(0)
            candidate = normpath(posixpath.join(current, part))
            node = self.nodes.get(candidate)
            if node is None:
                return None
            if node.kind == "link" and (parts or follow_last):
                depth += 1
                if depth > MAX_LINK_DEPTH:
                    return None
                target = node.target
                base = "/" if target.startswith("/") else current
                parts = [p for p in normpath(posixpath.join(base, target)).split("/") if p] + parts
                current = "/"
                continue
            current = candidate
        return current

    def lookup(self, path: str, *, follow_last: bool = True) -> tuple[str, Node] | None:
        real = self.resolve(path, follow_last=follow_last)
        if real is None:
            return None
        node = self.nodes.get(real)
        return (real, node) if node is not None else None

    def read(self, path: str) -> str | None:
        found = self.lookup(path)
        if found is None or found[1].kind != "file":
            return None
        return found[1].content

    def is_dir(self, path: str) -> bool:
        found = self.lookup(path)
        return found is not None and found[1].kind == "dir"

    def children(self, path: str) -> list[str]:
        """Names directly inside a directory (`path` already resolved), sorted like `ls` in the
        C locale."""
        base = normpath(path)
        provider = self.nodes.provider
        if provider is not None and provider.handles(base):
            virtual = provider.children(base)
            if virtual is not None:
                return virtual
        prefix = "/" if base == "/" else base + "/"
        names = []
        for key in self.nodes:
            if key.startswith(prefix) and key != base and "/" not in key[len(prefix):]:
                names.append(key[len(prefix):])
        return sorted(names)

    def files(self) -> dict[str, str]:
        """Every path that reads as a regular file (symlinks followed), for `ShellContext.files`."""
        out: dict[str, str] = {}
        for path, node in self.nodes.items():
            if node.kind == "file":
                out[path] = node.content
            elif node.kind == "link":
                content = self.read(path)
                if content is not None:
                    out[path] = content
                elif self.is_dir(path):
                    real = self.resolve(path) or ""
                    for sub, sub_node in self.nodes.items():
                        if sub.startswith(real + "/") and sub_node.kind == "file":
                            out[path + sub[len(real):]] = sub_node.content
        return out

    def overlay(self, written: dict[str, str]) -> None:
        """Apply files the container wrote earlier (its writable layer)."""
        for path, content in written.items():
            self.add_file(path, content)


def normpath(path: str) -> str:
    path = posixpath.normpath("/" + path.lstrip("/"))
    return "/" if path in ("/", "//") else path


# ----------------------------------------------------------------------------------- base image
DEBIAN, BUSYBOX, ALPINE = "debian", "busybox", "alpine"

_ALPINE_HINTS = ("alpine", "curlimages/curl", "polinux/stress", "nicolaka")


def image_family(image: str) -> str:
    """Which userland an image ships: BusyBox, Alpine (BusyBox + apk) or Debian (coreutils)."""
    ref = image.lower()
    name = ref.rsplit("/", 1)[-1]
    if name.startswith("busybox"):
        return BUSYBOX
    if any(hint in ref for hint in _ALPINE_HINTS):
        return ALPINE
    return DEBIAN


_OS_RELEASE = {
    DEBIAN: ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n'
             'VERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n'
             'HOME_URL="https://www.debian.org/"\nSUPPORT_URL="https://www.debian.org/support"\n'
             'BUG_REPORT_URL="https://bugs.debian.org/"\n'),
    ALPINE: ('NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.21.2\nPRETTY_NAME="Alpine Linux v3.21"\n'
             'HOME_URL="https://alpinelinux.org/"\nBUG_REPORT_URL="https://gitlab.alpinelinux.org/'
             'alpine/aports/-/issues"\n'),
}

_PASSWD = {
    DEBIAN: ("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
             "bin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\n"
             "sync:x:4:65534:sync:/bin:/bin/sync\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"),
    ALPINE: ("root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\n"
             "daemon:x:2:2:daemon:/sbin:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n"),
    BUSYBOX: ("root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\n"
              "bin:x:2:2:bin:/bin:/bin/false\nsys:x:3:3:sys:/dev:/bin/false\n"
              "sync:x:4:100:sync:/bin:/bin/sync\nmail:x:8:8:mail:/var/spool/mail:/bin/false\n"
              "www-data:x:33:33:www-data:/var/www:/bin/false\n"
              "operator:x:37:37:Operator:/var:/bin/false\n"
              "nobody:x:65534:65534:nobody:/home:/bin/false\n"),
}

_GROUP = {
    DEBIAN: ("root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\n"
             "www-data:x:33:\nstaff:x:50:\nnogroup:x:65534:\n"),
    ALPINE: ("root:x:0:root\nbin:x:1:root,bin,daemon\ndaemon:x:2:root,bin,daemon\nsys:x:3:root,bin\n"
             "adm:x:4:root,daemon\ntty:x:5:\ndisk:x:6:root\nwheel:x:10:root\nfloppy:x:11:root\n"
             "dialout:x:20:root\ntape:x:26:root\nvideo:x:27:root\nnogroup:x:65533:\n"
             "nobody:x:65534:\n"),
    BUSYBOX: ("root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\n"
              "wheel:x:10:root\nmail:x:8:\nwww-data:x:33:\noperator:x:37:\nstaff:x:50:\n"
              "users:x:100:\nnogroup:x:65534:\n"),
}

_TOP_DIRS = {
    DEBIAN: ("bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt", "proc",
             "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"),
    ALPINE: ("bin", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run",
             "sbin", "srv", "sys", "tmp", "usr", "var"),
    BUSYBOX: ("bin", "dev", "etc", "home", "lib", "lib64", "proc", "root", "sys", "tmp", "usr",
              "var"),
}


def _base_tree(fs: ContainerFS, family: str) -> None:
    for top in _TOP_DIRS[family]:
        fs.add_dir("/" + top, mode=0o1777 if top == "tmp" else 0o700 if top == "root" else 0o755)
    if family == DEBIAN:
        # Debian 12 is merged-/usr: the top-level dirs are symlinks into /usr.
        for top in ("bin", "lib", "lib64", "sbin"):
            fs.nodes.pop("/" + top, None)
            fs.add_dir("/usr/" + top)
            fs.add_link("/" + top, "usr/" + top)
    for sub in ("usr/local/bin", "usr/share", "var/log", "var/tmp", "var/cache", "var/lib", "run"):
        fs.add_dir("/" + sub)
    fs.add_file("/etc/passwd", _PASSWD[family])
    fs.add_file("/etc/group", _GROUP[family])
    if family in _OS_RELEASE:
        fs.add_file("/usr/lib/os-release" if family == DEBIAN else "/etc/os-release",
                    _OS_RELEASE[family])
        if family == DEBIAN:
            fs.add_link("/etc/os-release", "../usr/lib/os-release")
            fs.add_file("/etc/debian_version", "12.9\n")
        else:
            fs.add_file("/etc/alpine-release", "3.21.2\n")
    fs.add_file("/dev/null", "", mode=0o666)
    fs.add_file("/dev/termination-log", "", mode=0o666)


# ------------------------------------------------------------------------ kubelet-managed files
def pod_hostname(pod: dict[str, Any]) -> str:
    """`spec.hostname` or the pod name, cut to 63 characters like the kubelet does."""
    spec = pod.get("spec") or {}
    name = spec.get("hostname") or get_path(pod, "metadata", "name", default="")
    return str(name)[:63].rstrip("-.")


def hosts_file(twin: Twin, pod: dict[str, Any]) -> str:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if spec.get("hostNetwork"):
        node_ip = status.get("hostIP") or ""
        node = spec.get("nodeName") or ""
        return ("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                "fe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\n"
                f"ff02::2\tip6-allrouters\n{node_ip}\t{node}\n")
    lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
             "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet",
             "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
    pod_ip = status.get("podIP")
    hostname = pod_hostname(pod)
    if pod_ip:
        namespace = get_path(pod, "metadata", "namespace", default="default")
        if spec.get("subdomain"):
            fqdn = f"{hostname}.{spec['subdomain']}.{namespace}.svc.{CLUSTER_DOMAIN}"
            lines.append(f"{pod_ip}\t{fqdn}\t{hostname}")
        else:
            lines.append(f"{pod_ip}\t{hostname}")
    aliases = spec.get("hostAliases") or []
    if aliases:
        lines.append("")
        lines.append("# Entries added by HostAliases.")
        for alias in aliases:
            if isinstance(alias, dict) and alias.get("ip"):
                lines.append("\t".join([str(alias["ip"]), *[str(h) for h in alias.get("hostnames") or []]]))
    return "\n".join(lines) + "\n"


NODE_RESOLV = "nameserver 172.18.0.1\noptions ndots:0\n"


def resolv_conf(pod: dict[str, Any]) -> str:
    """What the kubelet asks containerd to write, per `dnsPolicy` and `dnsConfig`."""
    spec = pod.get("spec") or {}
    namespace = get_path(pod, "metadata", "namespace", default="default")
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    host_network = bool(spec.get("hostNetwork"))
    servers: list[str] = []
    searches: list[str] = []
    options: list[str] = []
    if policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not host_network):
        servers = [CLUSTER_DNS_IP]
        searches = [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]
        options = ["ndots:5"]
    elif policy != "None":
        return NODE_RESOLV if not spec.get("dnsConfig") else _merge_dns(
            ["172.18.0.1"], [], ["ndots:0"], spec.get("dnsConfig") or {})
    return _merge_dns(servers, searches, options, spec.get("dnsConfig") or {})


def _merge_dns(servers: list[str], searches: list[str], options: list[str],
               config: dict[str, Any]) -> str:
    servers = servers + [s for s in config.get("nameservers") or [] if s not in servers]
    searches = searches + [s for s in config.get("searches") or [] if s not in searches]
    merged: dict[str, str | None] = {}
    for opt in options:
        name, _, value = opt.partition(":")
        merged[name] = value or None
    for opt in config.get("options") or []:
        if isinstance(opt, dict) and opt.get("name"):
            merged[str(opt["name"])] = None if opt.get("value") is None else str(opt["value"])
    text = ""
    if searches:
        text += "search " + " ".join(searches) + "\n"
    for server in servers:
        text += f"nameserver {server}\n"
    if merged:
        text += "options " + " ".join(k if v is None else f"{k}:{v}" for k, v in merged.items()) + "\n"
    return text


# ------------------------------------------------------------------------------------ volumes
def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(parts).encode()).digest()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def service_account_token(twin: Twin, pod: dict[str, Any], audience: str | None = None,
                          expiration: int = 3607) -> str:
    """A JWT-shaped bound service-account token (claims like the real one, fake signature)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    namespace = meta.get("namespace", "default")
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    uid = meta.get("uid", "")
    issued = int(parse_time(meta["creationTimestamp"])) if meta.get("creationTimestamp") else \
        int(twin.clock.now)
    issuer = f"https://kubernetes.default.svc.{CLUSTER_DOMAIN}"
    header = {"alg": "RS256", "kid": _b64url(_digest("kid", str(twin.seed)))[:43]}
    claims = {
        "aud": [audience or issuer],
        "exp": issued + expiration,
        "iat": issued,
        "iss": issuer,
        "jti": str(_digest("jti", uid).hex()[:32]),
        "kubernetes.io": {
            "namespace": namespace,
            "node": {"name": spec.get("nodeName", ""), "uid": _digest("node", spec.get("nodeName", "")).hex()[:36]},
            "pod": {"name": meta.get("name", ""), "uid": uid},
            "serviceaccount": {"name": sa, "uid": _digest("sa", namespace, sa).hex()[:36]},
            "warnafter": issued + 3600,
        },
        "nbf": issued,
        "sub": f"system:serviceaccount:{namespace}:{sa}",
    }
    signature = _digest("sig", uid, "1") + _digest("sig", uid, "2") * 7
    return ".".join([_b64url(json.dumps(header, separators=(",", ":")).encode()),
                     _b64url(json.dumps(claims, separators=(",", ":")).encode()),
                     _b64url(signature[:256])])


def projected_token_subject(twin: Twin, token: str) -> str | None:
    """Who a pod's projected token authenticates as (`system:serviceaccount:NS:SA`): None unless
    it is exactly the token the kubelet mounts in a pod that still exists (same uid) and whose
    ServiceAccount still exists, as the API server's bound-token authenticator decides."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        bound = claims["kubernetes.io"]
        namespace, pod_ref = str(bound["namespace"]), bound["pod"]
        audience, lifetime = claims["aud"][0], int(claims["exp"]) - int(claims["iat"])
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    pod = twin.store.peek("Pod", namespace, str(pod_ref.get("name", "")))
    if pod is None or (pod.get("metadata") or {}).get("uid") != pod_ref.get("uid"):
        return None
    if service_account_token(twin, pod, audience, lifetime) != token.strip():
        return None
    sub = str(claims.get("sub", ""))
    account = sub.rsplit(":", 1)[-1]
    if twin.store.peek("ServiceAccount", namespace, account) is None:
        return None
    return sub


def cluster_ca(twin: Twin, namespace: str) -> str:
    """`ca.crt` from the namespace's `kube-root-ca.crt` ConfigMap, or the twin's own CA."""
    cm = twin.store.peek("ConfigMap", namespace, "kube-root-ca.crt")
    if cm is not None and (cm.get("data") or {}).get("ca.crt"):
        return str(cm["data"]["ca.crt"])
    raw = b"".join(_digest("ca", str(twin.seed), str(i)) for i in range(25))[:786]
    body = base64.b64encode(raw).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"


def _decode(value: Any) -> str:
    try:
        return base64.b64decode(str(value), validate=False).decode("utf-8", errors="replace")
    except (ValueError, TypeError):
        return ""


def _source_items(data: dict[str, str], items: Any, default_mode: int) -> list[tuple[str, str, int]]:
    """(relative path, content, mode) for a ConfigMap/Secret source with optional `items`."""
    if isinstance(items, list) and items:
        out = []
        for item in items:
            if isinstance(item, dict) and item.get("key") in data:
                mode = item.get("mode")
                out.append((str(item.get("path") or item["key"]), data[item["key"]],
                            int(mode) if isinstance(mode, int) else default_mode))
        return out
    return [(key, data[key], default_mode) for key in sorted(data)]


def _configmap_data(twin: Twin, namespace: str, name: str) -> dict[str, str] | None:
    cm = twin.store.peek("ConfigMap", namespace, name)
    if cm is None:
        return None
    data = {str(k): str(v) for k, v in (cm.get("data") or {}).items()}
    for key, value in (cm.get("binaryData") or {}).items():
        data[str(key)] = _decode(value)
    return data


def _secret_data(twin: Twin, namespace: str, name: str) -> dict[str, str] | None:
    secret = twin.store.peek("Secret", namespace, name)
    if secret is None:
        return None
    data = {str(k): _decode(v) for k, v in (secret.get("data") or {}).items()}
    for key, value in (secret.get("stringData") or {}).items():
        data[str(key)] = str(value)
    return data


def _field_value(pod: dict[str, Any], path: str) -> str:
    meta = pod.get("metadata") or {}
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{values[k]}"' for k in sorted(values))
    for prefix in ("metadata.labels['", "metadata.annotations['"):
        if path.startswith(prefix) and path.endswith("']"):
            values = meta.get(prefix.split(".")[1].split("[")[0]) or {}
            return str(values.get(path[len(prefix):-2], ""))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": get_path(pod, "spec", "nodeName"),
              "spec.serviceAccountName": get_path(pod, "spec", "serviceAccountName"),
              "status.podIP": get_path(pod, "status", "podIP"),
              "status.hostIP": get_path(pod, "status", "hostIP")}
    return str(simple.get(path) or "")


def resource_field_value(twin: Twin, pod: dict[str, Any], container: dict[str, Any] | str,
                         ref: dict[str, Any]) -> str:
    """A `resourceFieldRef` as the kubelet renders it: the container's request/limit divided by
    `divisor`, rounded up; an unset limit falls back to the node's allocatable."""
    from sregym.twin.machinery.quantity import cpu_cores, memory_bytes

    containers = get_path(pod, "spec", "containers", default=[]) or []
    default = container if isinstance(container, str) else str(container.get("name") or "")
    name = ref.get("containerName") or default
    target = next((c for c in containers if c.get("name") == name),
                  container if isinstance(container, dict) else {})
    kind, _, what = str(ref.get("resource") or "").partition(".")
    value = get_path(target, "resources", kind, what)
    node_name = get_path(pod, "spec", "nodeName")
    node = twin.store.peek("Node", None, node_name) if node_name else None
    if value is None and node is not None:
        value = get_path(node, "status", "allocatable", what)
    divisor = ref.get("divisor") or "1"
    if what == "cpu":
        milli = int(cpu_cores(value or "0") * 1000)
        return str(max(1, -(-milli // max(1, int(cpu_cores(divisor) * 1000)))))
    amount = memory_bytes(value or "0")
    return str(-(-amount // max(1, memory_bytes(divisor))))


def _downward_items(twin: Twin, pod: dict[str, Any], items: Any, default_mode: int,
                    container: str) -> list[tuple[str, str, int]]:
    out = []
    for item in items or []:
        if not isinstance(item, dict) or not item.get("path"):
            continue
        if isinstance(item.get("fieldRef"), dict):
            content = _field_value(pod, str(item["fieldRef"].get("fieldPath") or ""))
        elif isinstance(item.get("resourceFieldRef"), dict):
            content = resource_field_value(twin, pod, container, item["resourceFieldRef"])
        else:
            continue
        mode = item.get("mode")
        out.append((str(item["path"]), content, int(mode) if isinstance(mode, int) else default_mode))
    return out


def volume_files(twin: Twin, pod: dict[str, Any], volume: dict[str, Any],
                 container: str) -> list[tuple[str, str, int]] | None:
    """The files a volume holds as (relative path, content, mode); None for a plain directory
    volume (emptyDir, PVC, hostPath ...)."""
    namespace = get_path(pod, "metadata", "namespace", default="default")
    if isinstance(volume.get("configMap"), dict):
        src = volume["configMap"]
        data = _configmap_data(twin, namespace, str(src.get("name") or "")) or {}
        return _source_items(data, src.get("items"), int(src.get("defaultMode", 0o644)))
    if isinstance(volume.get("secret"), dict):
        src = volume["secret"]
        data = _secret_data(twin, namespace, str(src.get("secretName") or "")) or {}
        return _source_items(data, src.get("items"), int(src.get("defaultMode", 0o644)))
    if isinstance(volume.get("downwardAPI"), dict):
        src = volume["downwardAPI"]
        return _downward_items(twin, pod, src.get("items"), int(src.get("defaultMode", 0o644)), container)
    if isinstance(volume.get("projected"), dict):
        proj = volume["projected"]
        mode = int(proj.get("defaultMode", 0o644))
        out: list[tuple[str, str, int]] = []
        for source in proj.get("sources") or []:
            if not isinstance(source, dict):
                continue
            if isinstance(source.get("configMap"), dict):
                src = source["configMap"]
                name = str(src.get("name") or "")
                if name == "kube-root-ca.crt":
                    data = {"ca.crt": cluster_ca(twin, namespace)}
                else:
                    data = _configmap_data(twin, namespace, name) or {}
                out.extend(_source_items(data, src.get("items"), mode))
            elif isinstance(source.get("secret"), dict):
                src = source["secret"]
                data = _secret_data(twin, namespace, str(src.get("name") or "")) or {}
                out.extend(_source_items(data, src.get("items"), mode))
            elif isinstance(source.get("downwardAPI"), dict):
                out.extend(_downward_items(twin, pod, source["downwardAPI"].get("items"), mode, container))
            elif isinstance(source.get("serviceAccountToken"), dict):
                src = source["serviceAccountToken"]
                token = service_account_token(twin, pod, src.get("audience"),
                                              int(src.get("expirationSeconds") or 3607))
                out.append((str(src.get("path") or "token"), token, mode))
        return out
    return None


def _atomic_dir_name(pod: dict[str, Any], volume: str) -> str:
    """`..2026_01_05_09_00_00.123456789`: the kubelet's atomic-writer payload directory."""
    from datetime import UTC, datetime

    started = get_path(pod, "status", "startTime") or get_path(pod, "metadata", "creationTimestamp")
    stamp = datetime.fromtimestamp(parse_time(started) if started else 0, tz=UTC)
    suffix = int.from_bytes(_digest(get_path(pod, "metadata", "uid", default=""), volume)[:4], "big")
    return stamp.strftime("..%Y_%m_%d_%H_%M_%S.") + str(suffix % 10**10)


def mount_volume(fs: ContainerFS, twin: Twin, pod: dict[str, Any], volume: dict[str, Any],
                 mount: dict[str, Any], container: str) -> None:
    mount_path = normpath(str(mount.get("mountPath") or "/"))
    sub_path = str(mount.get("subPath") or "").strip("/")
    files = volume_files(twin, pod, volume, container)
    if files is None:
        fs.remove_tree(mount_path)
        fs.add_dir(mount_path, mode=0o777 if "emptyDir" in volume else 0o755)
        if str(get_path(volume, "hostPath", "path", default="")).rstrip("/") == "" and "hostPath" in volume:
            from sregym.twin.userland.node_host import node_files  # the node's own root (kubectl debug node)

            for path, content in sorted(node_files(twin, str(get_path(pod, "spec", "nodeName", default=""))).items()):
                fs.add_file(mount_path.rstrip("/") + path, content)
        return
    if sub_path:
        # A subPath mount shows one entry of the volume, copied, never updated.
        chosen = [(p, c, m) for p, c, m in files if p == sub_path]
        nested = [(p[len(sub_path) + 1:], c, m) for p, c, m in files if p.startswith(sub_path + "/")]
        fs.remove_tree(mount_path)
        if chosen:
            fs.add_file(mount_path, chosen[0][1], chosen[0][2])
        else:
            fs.add_dir(mount_path, mode=0o777)
            for rel, content, mode in nested:
                fs.add_file(posixpath.join(mount_path, rel), content, mode)
        return
    fs.remove_tree(mount_path)
    fs.add_dir(mount_path, mode=0o1777 if "configMap" not in volume and "secret" not in volume
               else 0o777)
    payload = _atomic_dir_name(pod, str(volume.get("name") or ""))
    fs.add_dir(posixpath.join(mount_path, payload))
    tops: list[str] = []
    for rel, content, mode in files:
        rel = rel.strip("/")
        fs.add_file(posixpath.join(mount_path, payload, rel), content, mode)
        top = rel.split("/", 1)[0]
        if top not in tops:
            tops.append(top)
    fs.add_link(posixpath.join(mount_path, "..data"), payload)
    for top in tops:
        fs.add_link(posixpath.join(mount_path, top), f"..data/{top}")


# --------------------------------------------------------------------------------- assembling
def _automounts_token(twin: Twin, pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    namespace = get_path(pod, "metadata", "namespace", default="default")
    sa = twin.store.peek("ServiceAccount", namespace, spec.get("serviceAccountName") or "default")
    if sa is not None and sa.get("automountServiceAccountToken") is not None:
        return bool(sa["automountServiceAccountToken"])
    return True


def mounted_token(twin: Twin, pod: dict[str, Any], container: str) -> str | None:
    """The ServiceAccount token `container` finds at `SA_DIR/token` (the automounted projected
    volume, or a volume the spec mounts there itself); None when nothing is mounted."""
    spec = pod.get("spec") or {}
    entry = next((c for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
                  if isinstance(c, dict) and c.get("name") == container), {})
    volumes = {str(v.get("name")): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for mount in entry.get("volumeMounts") or []:
        if isinstance(mount, dict) and normpath(str(mount.get("mountPath") or "")) == SA_DIR:
            sources = ((volumes.get(str(mount.get("name"))) or {}).get("projected") or {}).get("sources") or []
            for source in sources:
                src = source.get("serviceAccountToken") if isinstance(source, dict) else None
                if isinstance(src, dict) and str(src.get("path") or "token") == "token":
                    return service_account_token(twin, pod, src.get("audience"),
                                                 int(src.get("expirationSeconds") or 3607))
            return None
    return service_account_token(twin, pod) if _automounts_token(twin, pod) else None


def _executables(fs: ContainerFS, image: str, spec: Any) -> None:
    """The image's programs as files (`ls /usr/bin`, `find / -name curl`, `test -x`)."""
    from sregym.twin.node.image_families import executables

    tops = {top: fs.resolve(top) or top for top in ("/bin", "/sbin", "/lib")}
    for path in sorted(set(executables(image, spec).values())):
        top, _, rest = path[1:].partition("/")
        real = f"{tops.get('/' + top, '/' + top)}/{rest}" if rest else path
        if real in fs.nodes:
            continue
        if posixpath.dirname(real) not in fs.nodes:
            fs.add_dir(posixpath.dirname(real))
        fs.nodes[real] = Node("file", mode=0o755, mtime=fs.mtime)


def build_fs(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> ContainerFS:
    """The tree `kubectl exec` shows in `container` of `pod`."""
    started = get_path(pod, "status", "startTime") or get_path(pod, "metadata", "creationTimestamp")
    fs = ContainerFS(parse_time(started) if started else twin.clock.now)
    from sregym.twin.node.images import lookup

    try:
        spec, _ref = lookup(str(container.get("image") or ""), twin)
    except Exception:  # an unparsable reference simply has no extra files
        spec = None
    # an image entry may name its base (apache/kafka is eclipse-temurin's Alpine whatever its tag)
    declared = spec.extras.get("family") if spec is not None else None
    family = declared if declared in _OS_RELEASE or declared == BUSYBOX else \
        image_family(str(container.get("image") or ""))
    _base_tree(fs, family)
    _executables(fs, str(container.get("image") or ""), spec)
    extra_files = spec.extras.get("files") if spec is not None else None
    if isinstance(extra_files, dict):
        for path, content in sorted(extra_files.items()):
            fs.add_file(str(path), str(content))
    fs.add_file("/etc/hostname", pod_hostname(pod) + "\n")
    fs.add_file("/etc/hosts", hosts_file(twin, pod))
    fs.add_file("/etc/resolv.conf", resolv_conf(pod))
    volumes = {str(v.get("name")): v for v in get_path(pod, "spec", "volumes", default=[]) or []
               if isinstance(v, dict)}
    mounts = [m for m in container.get("volumeMounts") or [] if isinstance(m, dict)]
    name = str(container.get("name") or "")
    # Shorter mount paths first, so nested mounts land inside their parents.
    for mount in sorted(mounts, key=lambda m: normpath(str(m.get("mountPath") or "/")).count("/")):
        volume = volumes.get(str(mount.get("name")))
        if volume is not None:
            mount_volume(fs, twin, pod, volume, mount, name)
    if (not any(normpath(str(m.get("mountPath") or "")) == SA_DIR for m in mounts)
            and _automounts_token(twin, pod)):
        synthetic = {"name": "kube-api-access", "projected": {"defaultMode": 0o644, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}
        mount_volume(fs, twin, pod, synthetic, {"mountPath": SA_DIR, "readOnly": True}, name)
    return fs
