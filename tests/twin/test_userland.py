"""The exec userland: what `kubectl exec` shows inside a container, checked in-process.

Pods get a hand-written running status so these tests exercise only the userland (filesystem,
environment, commands, TTY sessions), not the kubelet.
"""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.node.shell import lookup_command
from sregym.twin.userland.context import exec_context, executable_exists, run_exec
from sregym.twin.userland.fs import resolv_conf
from sregym.twin.userland.session import TtySession, is_interactive_shell

CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: default}
data:
  app.conf: "port=8080\\nlevel=debug\\nmode=fast\\n"
  LOG_LEVEL: info
---
apiVersion: v1
kind: Secret
metadata: {name: db-creds, namespace: default}
data: {password: czNjcjN0}
---
apiVersion: v1
kind: Service
metadata: {name: cart-db, namespace: default}
spec:
  selector: {app: cart-db}
  ports: [{name: mongo, port: 27017, targetPort: 27017}]
"""


def _pod(image: str = "nginx:1.27", **spec: Any) -> dict[str, Any]:
    container = {
        "name": "web", "image": image,
        "env": [{"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "app-config",
                                                                         "key": "LOG_LEVEL"}}},
                {"name": "DB_URL", "value": "mongodb://$(CART_DB_SERVICE_HOST):27017"}],
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"},
                         {"name": "creds", "mountPath": "/etc/creds", "readOnly": True},
                         {"name": "scratch", "mountPath": "/scratch"}],
    }
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"nodeName": "kind-worker", "containers": [container],
                 "volumes": [{"name": "cfg", "configMap": {"name": "app-config"}},
                             {"name": "creds", "secret": {"secretName": "db-creds"}},
                             {"name": "scratch", "emptyDir": {}}],
                 **spec},
        "status": {"phase": "Running", "podIP": "10.244.1.7", "hostIP": "172.18.0.3",
                   "startTime": "2026-01-05T09:00:01Z",
                   "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0,
                                          "image": image, "imageID": "",
                                          "containerID": "containerd://" + "a" * 64,
                                          "state": {"running": {"startedAt": "2026-01-05T09:00:02Z"}}}]},
    }


@pytest.fixture
def twin() -> Twin:
    twin = Twin(seed=3)
    twin.apply(CONFIG)
    return twin


def run(twin: Twin, pod: dict[str, Any], *argv: str, stdin: str = "") -> tuple[str, str, int]:
    ctx = exec_context(twin, pod, "web")
    result = run_exec(ctx, list(argv), stdin)
    return result.stdout, result.stderr, result.exit_code


def test_env_has_resolved_values_service_links_and_hostname(twin: Twin) -> None:
    out, _err, code = run(twin, _pod(), "env")
    assert code == 0
    lines = out.splitlines()
    assert "LOG_LEVEL=info" in lines
    service_ip = twin.get("services", "default", "cart-db")["spec"]["clusterIP"]
    assert f"DB_URL=mongodb://{service_ip}:27017" in lines
    assert f"CART_DB_SERVICE_HOST={service_ip}" in lines
    assert f"CART_DB_PORT_27017_TCP=tcp://{service_ip}:27017" in lines
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1" in lines
    assert "HOSTNAME=web-0" in lines
    assert any(line.startswith("PATH=/usr/local/sbin:") for line in lines)
    out, _err, code = run(twin, _pod(), "printenv", "LOG_LEVEL")
    assert (out, code) == ("info\n", 0)


def test_mounted_config_and_secret_files(twin: Twin) -> None:
    pod = _pod()
    assert run(twin, pod, "cat", "/etc/app/app.conf")[0] == "port=8080\nlevel=debug\nmode=fast\n"
    assert run(twin, pod, "cat", "/etc/creds/password")[0] == "s3cr3t"
    listing = run(twin, pod, "ls", "/etc/app")[0].splitlines()
    assert listing == ["LOG_LEVEL", "app.conf"]
    long = run(twin, pod, "ls", "-la", "/etc/app")[0].splitlines()
    assert long[0].startswith("total ")
    data_link = next(line for line in long if line.endswith(" ..data -> " + line.split(" -> ")[-1])
                     and "..data" in line)
    assert data_link.startswith("lrwxrwxrwx ")
    assert any(line.startswith("lrwxrwxrwx") and line.endswith("app.conf -> ..data/app.conf")
               for line in long)
    assert run(twin, pod, "ls", "/scratch") == ("", "", 0)


def test_kubelet_managed_files(twin: Twin) -> None:
    pod = _pod(hostname="web-0", subdomain="web")
    hosts = run(twin, pod, "cat", "/etc/hosts")[0]
    assert hosts.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert "10.244.1.7\tweb-0.web.default.svc.cluster.local\tweb-0\n" in hosts
    resolv = run(twin, pod, "cat", "/etc/resolv.conf")[0]
    assert resolv == ("search default.svc.cluster.local svc.cluster.local cluster.local\n"
                      "nameserver 10.96.0.10\noptions ndots:5\n")
    assert run(twin, pod, "hostname")[0] == "web-0\n"
    sa = run(twin, pod, "ls", "/var/run/secrets/kubernetes.io/serviceaccount")[0].split()
    assert sa == ["ca.crt", "namespace", "token"]
    assert run(twin, pod, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace")[0] == "default"
    token = run(twin, pod, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token")[0]
    assert token.count(".") == 2 and token.startswith("eyJ")


def test_resolv_conf_follows_dns_policy() -> None:
    base = {"metadata": {"namespace": "shop"}, "spec": {}}
    assert "search shop.svc.cluster.local" in resolv_conf(base)
    custom = {"metadata": {"namespace": "shop"},
              "spec": {"dnsPolicy": "None",
                       "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["corp.example"],
                                     "options": [{"name": "ndots", "value": "2"}]}}}
    assert resolv_conf(custom) == "search corp.example\nnameserver 1.1.1.1\noptions ndots:2\n"
    host = {"metadata": {"namespace": "shop"}, "spec": {"dnsPolicy": "Default"}}
    assert "10.96.0.10" not in resolv_conf(host)


def test_shell_pipes_and_text_tools(twin: Twin) -> None:
    pod = _pod()
    out, _err, code = run(twin, pod, "sh", "-c", "echo $HOSTNAME; grep -c e /etc/app/app.conf; "
                                                 "head -n 1 /etc/app/app.conf | wc -c; "
                                                 "grep -n mode /etc/app/app.conf")
    assert code == 0
    assert out == "web-0\n2\n10\n3:mode=fast\n"
    assert run(twin, pod, "grep", "nothing", "/etc/app/app.conf")[2] == 1
    assert run(twin, pod, "wc", "-l", "/etc/app/app.conf")[0] == "3 /etc/app/app.conf\n"


def test_errors_follow_the_image_userland(twin: Twin) -> None:
    debian, busybox = _pod("nginx:1.27"), _pod("busybox:1.36")
    assert run(twin, debian, "ls", "/nope") == (
        "", "ls: cannot access '/nope': No such file or directory\n", 2)
    assert run(twin, busybox, "ls", "/nope") == ("", "ls: /nope: No such file or directory\n", 1)
    _out, err, code = run(twin, debian, "sh", "-c", "curlx http://x")
    assert code == 127 and err == "sh: 1: curlx: not found\n"
    _out, err, code = run(twin, busybox, "sh", "-c", "curlx http://x")
    assert code == 127 and err == "sh: curlx: not found\n"
    ctx = exec_context(twin, debian, "web")
    assert not executable_exists(ctx, "curlx")
    assert executable_exists(ctx, "ls") and lookup_command("ls", ctx) is not None


def test_identity_honours_security_context(twin: Twin) -> None:
    root = _pod()
    assert run(twin, root, "id")[0] == "uid=0(root) gid=0(root) groups=0(root)\n"
    assert run(twin, root, "whoami")[0] == "root\n"
    user = _pod(securityContext={"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000})
    assert run(twin, user, "id")[0] == "uid=1000 gid=3000 groups=3000,2000\n"
    assert run(twin, user, "whoami") == ("", "whoami: cannot find name for user ID 1000\n", 1)
    uname = run(twin, root, "uname", "-a")[0]
    assert uname.startswith("Linux web-0 ") and uname.rstrip().endswith("x86_64 GNU/Linux")
    assert run(twin, root, "pwd")[0] == "/\n"


def test_writes_persist_within_a_container_instance(twin: Twin) -> None:
    pod = _pod()
    assert run(twin, pod, "sh", "-c", "echo 42 > /tmp/answer")[2] == 0
    assert run(twin, pod, "cat", "/tmp/answer")[0] == "42\n"
    restarted = _pod()
    restarted["status"]["containerStatuses"][0]["containerID"] = "containerd://" + "b" * 64
    assert run(twin, restarted, "cat", "/tmp/answer")[2] == 1


def test_stdin_reaches_the_command(twin: Twin) -> None:
    assert run(twin, _pod(), "wc", "-l", stdin="a\nb\n")[0].strip() == "2"
    assert run(twin, _pod(), "sh", stdin="echo from-script\n")[0] == "from-script\n"


def test_tty_session_echoes_and_keeps_state(twin: Twin) -> None:
    assert is_interactive_shell(["/bin/sh"]) and not is_interactive_shell(["sh", "-c", "ls"])
    ctx = exec_context(twin, _pod("busybox:1.36"), "web", tty=True)
    session = TtySession(ctx, ["sh"])
    assert session.start() == "/ # "
    out = session.feed("cd /etc/app\r")
    assert out == "cd /etc/app\r\n/etc/app # "
    out = session.feed("cat app.conz\x7ff\r")
    assert "port=8080\r\nlevel=debug\r\n" in out
    assert session.exit_code is None
    session.feed("exit 4\r")
    assert session.exit_code == 4
