"""The image catalogue: references, registry answers, argv rules and image behaviours."""

from __future__ import annotations

from sregym.twin.node.images import (
    ImageRef,
    ImageSpec,
    container_argv,
    lookup,
    register_image,
    resolve_pull,
    start_program,
    valid_reference,
)
from sregym.twin.node.shell import Listen, Output, Process, ShellContext, Usage


def test_reference_parsing():
    assert ImageRef.parse("nginx").canonical == "docker.io/library/nginx:latest"
    assert ImageRef.parse("curlimages/curl:8.11.1").canonical == "docker.io/curlimages/curl:8.11.1"
    ref = ImageRef.parse("registry.k8s.io/coredns/coredns:v1.11.3")
    assert (ref.registry, ref.repository, ref.tag) == ("registry.k8s.io", "coredns/coredns", "v1.11.3")
    assert ImageRef.parse("localhost:5000/app:1").registry == "localhost:5000"
    assert valid_reference("nginx:1.27") and not valid_reference("Nginx:1.27")


def test_known_image_pulls_with_size_and_digest():
    result = resolve_pull("nginx:1.27")
    assert result.ok
    assert result.size_bytes > 70_000_000
    assert result.image_id.startswith("docker.io/library/nginx@sha256:")
    assert resolve_pull("nginx:1.27").digest == result.digest  # deterministic


def test_unknown_tag_is_not_found():
    result = resolve_pull("nginx:1.99")
    assert not result.ok
    assert result.error == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.99": '
        'failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found')


def test_unknown_repository_is_access_denied():
    result = resolve_pull("nginxx:1.27")
    assert "pull access denied, repository does not exist or may require authorization" in result.error
    assert result.error.startswith("rpc error: code = Unknown desc = ")


def test_unknown_registry_fails_dns():
    result = resolve_pull("registry.example.invalid/team/app:1.0")
    assert "no such host" in result.error


def test_catalogue_covers_required_images():
    for ref in ("busybox:1.36", "alpine:3.20", "curlimages/curl:8.11.1", "polinux/stress",
                "redis:7.4", "memcached:1.6", "mongo:4.4.6", "postgres:16", "python:3.12-slim",
                "registry.k8s.io/pause:3.10", "registry.k8s.io/coredns/coredns:v1.11.3",
                "registry.k8s.io/kube-proxy:v1.32.2", "registry.k8s.io/etcd:3.5.16-0",
                "registry.k8s.io/kube-apiserver:v1.32.2", "fluent/fluent-bit:3.2",
                "jaegertracing/all-in-one:1.62.0", "prom/prometheus:v2.55.1", "hashicorp/consul:1.20"):
        assert resolve_pull(ref).ok, ref


def test_argv_follows_kubernetes_rules():
    spec, _ = lookup("nginx:1.27")
    assert container_argv(spec, {}) == ["/docker-entrypoint.sh", "nginx", "-g", "daemon off;"]
    assert container_argv(spec, {"args": ["nginx-debug"]}) == ["/docker-entrypoint.sh", "nginx-debug"]
    assert container_argv(spec, {"command": ["sh", "-c"], "args": ["echo hi"]}) == ["sh", "-c", "echo hi"]


def _run(image: str, container: dict, files: dict | None = None, env: dict | None = None, until=30.0):
    spec, _ = lookup(image)
    ctx = ShellContext(env=env or {}, files=files or {}, hostname="pod-0")
    program = start_program(spec, container_argv(spec, container), ctx)
    assert program is not None
    proc = Process(program, 0.0)
    return proc, [e.effect for e in proc.advance(until)]


def test_nginx_default_serves_root_only():
    proc, effects = _run("nginx:1.27", {})
    listens = [e for e in effects if isinstance(e, Listen)]
    assert listens and listens[0].port == 80
    assert "/" in listens[0].http_paths and "/healthz" not in listens[0].http_paths
    assert not proc.finished


def test_nginx_listen_port_comes_from_mounted_config():
    conf = "server {\n  listen 8080;\n  location /healthz { return 200 'ok'; }\n}\n"
    _, effects = _run("nginx:1.27", {}, files={"/etc/nginx/conf.d/default.conf": conf})
    listens = [e for e in effects if isinstance(e, Listen)]
    assert [listen.port for listen in listens] == [8080]
    assert "/healthz" in listens[0].http_paths


def test_nginx_broken_config_exits():
    proc, effects = _run("nginx:1.27", {}, files={"/etc/nginx/conf.d/default.conf": "server {\n listen 80;\n"})
    assert proc.finished and proc.exit_code == 1
    assert any(isinstance(e, Output) and "[emerg]" in e.text for e in effects)


def test_postgres_requires_a_password():
    proc, effects = _run("postgres:16", {})
    assert proc.finished and proc.exit_code == 1
    assert any("superuser password is not specified" in e.text for e in effects if isinstance(e, Output))
    proc, _ = _run("postgres:16", {}, env={"POSTGRES_PASSWORD": "s3cret"})
    assert not proc.finished


def test_stress_allocates_requested_memory():
    _, effects = _run("polinux/stress", {"command": ["stress"], "args": ["--vm", "1", "--vm-bytes", "150M",
                                                                         "--vm-hang", "1"]})
    usage = [e for e in effects if isinstance(e, Usage)]
    assert usage and usage[0].memory_bytes >= 150 * 2**20


def test_missing_executable_has_no_program():
    spec, _ = lookup("busybox:1.36")
    assert start_program(spec, ["/app/server"], ShellContext()) is None
    distroless, _ = lookup("registry.k8s.io/pause:3.10")
    assert start_program(distroless, ["sh", "-c", "true"], ShellContext()) is None


def test_declarative_images_registered_by_others_serve():
    register_image(ImageSpec("docker.io/sregymtest/webhook", ("v1",), ports=(8443,),
                             http_paths=("/validate",), startup_logs=("serving on :8443",)))
    _, effects = _run("sregymtest/webhook:v1", {"args": ["--port=8443"]})
    assert Listen(8443, http_paths=("/validate",)) in effects
    assert Output("stdout", "serving on :8443\n") in effects
    assert resolve_pull("sregymtest/webhook:v2").error.endswith("not found")


def test_each_twin_has_its_own_registry_over_the_base_images() -> None:
    from sregym.twin.node.images import catalogue_of
    from sregym.twin.twin import Twin

    a, b = Twin(seed=0, bootstrap=False), Twin(seed=0, bootstrap=False)
    base_tags = lookup("nginx:1.27")[0].tags
    # A push of a new tag to a base repository extends that twin's copy only.
    catalogue_of(a).register(ImageSpec("docker.io/library/nginx", ("9.9.9",)))
    assert resolve_pull("nginx:9.9.9", a).ok and resolve_pull("nginx:1.27", a).ok
    assert "not found" in resolve_pull("nginx:9.9.9", b).error
    assert lookup("nginx:1.27")[0].tags == base_tags
    catalogue_of(a).register(ImageSpec("ghcr.io/acme/shop", ("1.0",)))
    assert resolve_pull("ghcr.io/acme/shop:1.0", a).ok and not resolve_pull("ghcr.io/acme/shop:1.0", b).ok
