"""The image catalogue: which image:tag exists, and what a container started from it does.

A real registry answers "not found" for a missing tag and "pull access denied" for a missing
repository; the twin does the same from this catalogue. For images that exist, the entry says what
the process does given its container spec (ports it listens on, health endpoints, config it needs
and how it fails without it, log lines, exit codes, memory), which is how probes, crashes and OOM
kills emerge from causes rather than being scripted.

Behaviour is expressed as shell commands (see `sregym.twin.node.shell`): an image has an ENTRYPOINT
and CMD like a real one, its own binaries in `commands` (`nginx`, `redis-server` ...), and the
kubelet runs `argv` through the shell with those binaries on the PATH. A command is a generator
yielding effects (`Output`, `Sleep`, `Listen`, `Usage`) and returning an exit code, so a behaviour
reads its real inputs (argv, env, mounted files) and reacts the way the real program does.

Images registered with only the declarative fields (`ports`, `http_paths`, `startup_seconds`,
`memory_mb`, `startup_logs`) get a default server program built from them; any argv that names no
known binary runs it too, so a helper's webhook image works whatever `args` a manifest passes.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sregym.twin.node.shell import (
    FOREVER,
    CommandFn,
    Invocation,
    Listen,
    Program,
    Shell,
    ShellContext,
    Sleep,
    Usage,
    drive,
    lookup_command,
)

DEFAULT_REGISTRY = "docker.io"
# Registries that answer; anything else fails DNS resolution like an unknown host would.
KNOWN_REGISTRIES = ("docker.io", "registry.k8s.io", "quay.io", "ghcr.io", "gcr.io",
                    "mcr.microsoft.com", "public.ecr.aws", "registry.gitlab.com")
MIB = 1 << 20


@dataclass(frozen=True)
class ImageRef:
    """A parsed image reference: `registry/repository:tag` (digest refs keep `digest`)."""

    registry: str
    repository: str
    tag: str
    digest: str = ""

    @classmethod
    def parse(cls, ref: str) -> ImageRef:
        return _parse_reference(ref) if cls is ImageRef else cls._parse(ref)

    @classmethod
    def _parse(cls, ref: str) -> ImageRef:
        text = ref.strip()
        digest = ""
        if "@" in text:
            text, digest = text.split("@", 1)
        name, tag = text, ""
        last = text.rsplit("/", 1)[-1]
        if ":" in last:
            name, tag = text.rsplit(":", 1)
        first, _, rest = name.partition("/")
        if rest and ("." in first or ":" in first or first == "localhost"):
            registry, repository = first, rest
        else:
            registry, repository = DEFAULT_REGISTRY, name
        if registry == DEFAULT_REGISTRY and "/" not in repository:
            repository = f"library/{repository}"
        return cls(registry, repository, tag or ("" if digest else "latest"), digest)

    @property
    def canonical(self) -> str:
        base = f"{self.registry}/{self.repository}"
        return f"{base}@{self.digest}" if self.digest else f"{base}:{self.tag}"

    @property
    def base(self) -> str:
        return f"{self.registry}/{self.repository}"


@functools.lru_cache(maxsize=4096)
def _parse_reference(ref: str) -> ImageRef:
    """`ImageRef.parse`, memoised (the reference is frozen): the datastore models look up their
    container's image on every request, a dozen times a tick."""
    return ImageRef._parse(ref)


_REFERENCE = re.compile(
    r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$")


def valid_reference(ref: str) -> bool:
    """Docker reference grammar (lower-case repository, tag charset), as containerd checks it."""
    return bool(ref) and _REFERENCE.match(ref.strip()) is not None and ref == ref.strip()


@dataclass
class ImageSpec:
    """One repository in the catalogue and the tags that exist for it."""

    repository: str  # canonical, e.g. "docker.io/library/nginx" or "registry.k8s.io/coredns/coredns"
    tags: tuple[str, ...]
    size_mb: float = 50.0
    description: str = ""
    # Declarative behaviour of a long-running server image: TCP ports it listens on once started,
    # HTTP paths that answer 200 on those ports (empty = every path answers 200), seconds from
    # start until it listens, steady working-set memory, and log lines printed at start.
    ports: tuple[int, ...] = ()
    http_paths: tuple[str, ...] = ()
    startup_seconds: float = 1.0
    memory_mb: float = 20.0
    startup_logs: tuple[str, ...] = ()
    private: bool = False  # pulling any tag fails with "pull access denied"
    extras: dict[str, Any] = field(default_factory=dict)
    # Image config: ENTRYPOINT and CMD, the shell flavour ("ash", "dash", "bash", "" = none) and
    # the image's own executables (name -> command) found before the common userland.
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    shell: str = "ash"
    commands: dict[str, CommandFn] = field(default_factory=dict)
    cpu_cores: float = 0.001
    # Tags pushed with an image config of their own (one repository, several Dockerfiles: the
    # OpenTelemetry demo's `<v>-kafka` is built FROM apache/kafka, its `<v>-cart` is not).
    by_tag: dict[str, ImageSpec] = field(default_factory=dict)

    def for_tag(self, tag: str) -> ImageSpec:
        """The image a tag of this repository is: its own build when pushed with one."""
        return self.by_tag.get(tag, self)

    def size_bytes(self, tag: str) -> int:
        """Deterministic per-tag size near `size_mb` (tags of one repo differ a little)."""
        wobble = int(hashlib.sha256(f"{self.repository}:{tag}".encode()).hexdigest()[:6], 16) % 900_000
        return int(self.size_mb * 1_000_000) + wobble

    def digest(self, tag: str) -> str:
        return "sha256:" + hashlib.sha256(f"{self.repository}:{tag}:manifest".encode()).hexdigest()

    def main(self) -> CommandFn:
        """The image's default program: its declared server behaviour."""
        return self.extras.get("main") or _declarative_server(self)


_CATALOGUE: dict[str, ImageSpec] = {}  # the built-in base images every registry has


def register_image(spec: ImageSpec) -> ImageSpec:
    """Add (or extend with more tags) a built-in base repository, shared by every twin.

    Only the twin's own images (base OS and server images, the control plane, datastores, chaos
    and webhook helpers) belong here; an app's images go to the twin it is deployed into
    (`catalogue_of(twin).register`), so one twin never sees another's pushes."""
    return _merge(_CATALOGUE, spec, copy_existing=False)


def _start_config(spec: ImageSpec) -> tuple[Any, ...]:
    """How a container of the image starts (a Dockerfile's ENTRYPOINT/CMD, or its program)."""
    return (spec.entrypoint, spec.cmd, spec.extras.get("main"))


def _merge(table: dict[str, ImageSpec], spec: ImageSpec, *, copy_existing: bool) -> ImageSpec:
    """A push of more tags (and binaries) to a repository: tags add up, the first push's image
    config stays for tags pushed with the same or no start config (more tags, binaries, markers);
    tags pushed with another way to start (entrypoint, cmd or program) keep their own (`by_tag`). With `copy_existing` an inherited
    entry is copied, never changed in place."""
    existing = table.get(spec.repository)
    if existing is None or existing is spec:
        table[spec.repository] = _copy(spec) if copy_existing else spec
        return table[spec.repository]
    if copy_existing:
        existing = table[spec.repository] = _copy(existing)
    existing.tags = tuple(dict.fromkeys((*existing.tags, *spec.tags)))
    if any(_start_config(spec)) and _start_config(spec) != _start_config(existing):
        own = _copy(spec) if copy_existing else spec
        existing.by_tag.update(dict.fromkeys(spec.tags, own))
        return own
    existing.extras.update(spec.extras)
    existing.commands.update(spec.commands)
    return existing


def _copy(spec: ImageSpec) -> ImageSpec:
    return replace(spec, extras=dict(spec.extras), commands=dict(spec.commands), by_tag=dict(spec.by_tag))


class ImageCatalogue:
    """One twin's registry: the built-in base images plus the images pushed to this twin (its
    apps' images, a fault's faulty build). Lookups see this twin's pushes first."""

    def __init__(self) -> None:
        self.pushed: dict[str, ImageSpec] = {}

    def register(self, spec: ImageSpec) -> ImageSpec:
        """Push a repository (or more tags of one) to this twin's registry only."""
        if spec.repository not in self.pushed and spec.repository in _CATALOGUE:
            self.pushed[spec.repository] = _CATALOGUE[spec.repository]
        return _merge(self.pushed, spec, copy_existing=True)

    def get(self, repository: str) -> ImageSpec | None:
        return self.pushed.get(repository) or _CATALOGUE.get(repository)

    def entries(self) -> dict[str, ImageSpec]:
        return {**_CATALOGUE, **self.pushed}


def catalogue_of(twin: Any) -> ImageCatalogue:
    """The twin's image registry (created empty of pushes on first use)."""
    found = twin.services.images
    if found is None:
        found = twin.services.images = ImageCatalogue()
    return found


def lookup(ref: str, twin: Any = None) -> tuple[ImageSpec | None, ImageRef]:
    """Find the catalogue entry for an image reference (None if the repository is unknown), in
    `twin`'s registry when given, else among the built-in base images."""
    parsed = ImageRef.parse(ref)
    repository = f"{parsed.registry}/{parsed.repository}"
    found = catalogue_of(twin).get(repository) if twin is not None else _CATALOGUE.get(repository)
    return (found.for_tag(parsed.tag) if found is not None else None), parsed


def catalogue(twin: Any = None) -> dict[str, ImageSpec]:
    return catalogue_of(twin).entries() if twin is not None else dict(_CATALOGUE)


# ---------------------------------------------------------------------------------------- pulls
@dataclass(frozen=True)
class PullResult:
    """What a registry answers for a reference: the image, or containerd's error text."""

    ref: ImageRef
    spec: ImageSpec | None
    error: str = ""  # the `rpc error: ...` text the kubelet puts in events and status
    size_bytes: int = 0
    digest: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def image_id(self) -> str:
        return f"{self.ref.base}@{self.digest}"


def resolve_pull(image: str, twin: Any = None) -> PullResult:
    """Resolve a pull the way containerd + the registry (the twin's, when given) would."""
    spec, ref = lookup(image, twin)
    canonical = ref.canonical
    prefix = f'failed to pull and unpack image "{canonical}": failed to resolve reference "{canonical}"'
    if ref.registry not in KNOWN_REGISTRIES and spec is None:
        path = ref.repository
        manifest = ref.digest or ref.tag
        return PullResult(ref, None, (
            f'rpc error: code = Unknown desc = {prefix}: failed to do request: Head '
            f'"https://{ref.registry}/v2/{path}/manifests/{manifest}": dial tcp: lookup '
            f"{ref.registry.split(':')[0]} on 172.18.0.1:53: no such host"))
    if spec is None or spec.private:
        if ref.registry == DEFAULT_REGISTRY or (spec is not None and spec.private):
            return PullResult(ref, None, (
                f"rpc error: code = Unknown desc = {prefix}: pull access denied, repository does "
                "not exist or may require authorization: server message: insufficient_scope: "
                "authorization failed"))
        return PullResult(ref, None, f"rpc error: code = NotFound desc = {prefix}: {canonical}: not found")
    if ref.digest:
        known = {spec.digest(t): t for t in spec.tags}
        if ref.digest not in known:
            return PullResult(ref, None, f"rpc error: code = NotFound desc = {prefix}: {canonical}: not found")
        tag = known[ref.digest]
        return PullResult(ref, spec, size_bytes=spec.size_bytes(tag), digest=ref.digest)
    if ref.tag not in spec.tags:
        return PullResult(ref, None, f"rpc error: code = NotFound desc = {prefix}: {canonical}: not found")
    return PullResult(ref, spec, size_bytes=spec.size_bytes(ref.tag), digest=spec.digest(ref.tag))


# ------------------------------------------------------------------------------------- programs
def container_argv(spec: ImageSpec | None, container: dict[str, Any]) -> list[str]:
    """Kubernetes' rule: `command` replaces ENTRYPOINT (and drops CMD); `args` replaces CMD."""
    command = container.get("command")
    args = container.get("args")
    entrypoint = list(spec.entrypoint) if spec else []
    cmd = list(spec.cmd) if spec else []
    if command:
        return [str(a) for a in command] + [str(a) for a in (args or [])]
    if args:
        return entrypoint + [str(a) for a in args]
    return entrypoint + cmd


def image_resolver(spec: ImageSpec | None) -> Callable[[str], CommandFn | None]:
    """Command lookup for a container of this image: the image's own binaries first."""
    commands = dict(spec.commands) if spec else {}

    def resolve(name: str) -> CommandFn | None:
        return commands.get(name)

    return resolve


def start_program(spec: ImageSpec | None, argv: list[str], ctx: ShellContext) -> Program | None:
    """The program a new container runs, or None when argv[0] is no executable in the image
    (containerd's "executable file not found in $PATH" start error)."""
    if spec is not None:
        ctx.shell_flavour = spec.shell
        ctx.userland = bool(spec.shell)
        ctx.resolve = image_resolver(spec)
    fn = lookup_command(argv[0], ctx) if argv else None
    if fn is None:
        lenient = spec is not None and not spec.commands and not spec.entrypoint and not spec.cmd
        if not argv or lenient:
            if spec is None:
                return None
            fn = spec.main()
        else:
            return None
    shell = Shell(ctx, argv[0].rsplit("/", 1)[-1] if argv else "sh")
    return drive(fn, Invocation(list(argv) or ["main"], ctx, shell), shell)


def serve(call: Invocation, *, ports: tuple[int, ...] = (), udp_ports: tuple[int, ...] = (),
          http_paths: tuple[str, ...] | None = (), startup_seconds: float = 1.0,
          memory_mb: float = 20.0, cpu_cores: float = 0.001, logs: list[str] | None = None,
          ready_logs: list[str] | None = None,
          http_ports: dict[int, tuple[str, ...] | None] | None = None) -> Program:
    """A long-running server: log, start up, listen, then run until killed."""
    for line in logs or []:
        call.write(line + "\n")
    yield Usage(memory_bytes=int(memory_mb * MIB), cpu_cores=cpu_cores)
    if startup_seconds > 0:
        yield Sleep(startup_seconds)
    for port in ports:
        paths = (http_ports or {}).get(port, http_paths)
        yield Listen(port, "TCP", http_paths=paths)
    for port in udp_ports:
        yield Listen(port, "UDP", http_paths=None)
    for line in ready_logs or []:
        call.write(line + "\n")
    yield Sleep(FOREVER)
    return 0


def _declarative_server(spec: ImageSpec) -> CommandFn:
    def run(call: Invocation) -> Program:
        return (yield from serve(call, ports=spec.ports, http_paths=spec.http_paths,
                                 startup_seconds=spec.startup_seconds, memory_mb=spec.memory_mb,
                                 cpu_cores=spec.cpu_cores, logs=list(spec.startup_logs)))

    return run


def argv_flag(argv: list[str], *names: str, default: str | None = None) -> str | None:
    """Value of `--name value`, `--name=value` or `-n value` in argv."""
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                return argv[index + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1:]
    return default


def log_stamp(call: Invocation, fmt: str) -> str:
    return datetime.fromtimestamp(call.now, tz=UTC).strftime(fmt)


def exec_rest(call: Invocation, argv: list[str]) -> Program:
    """What a `docker-entrypoint.sh "$@"` does for a non-server first argument: exec it."""
    return (yield from call.shell._invoke(argv, {}, call.stdin))


# -------------------------------------------------------------------------------------- nginx
_NGINX_DEFAULT_PATHS = ("/", "/index.html", "/50x.html")


def _nginx_config(call: Invocation) -> tuple[list[int], tuple[str, ...] | None, str | None]:
    """Ports and served paths from mounted nginx config; an error message for a broken file."""
    files = {p: c for p, c in sorted(call.ctx.files.items())
             if p == "/etc/nginx/nginx.conf" or (p.startswith("/etc/nginx/conf.d/") and p.endswith(".conf"))}
    if not any(p.startswith("/etc/nginx/conf.d/") for p in files):
        files["/etc/nginx/conf.d/default.conf"] = "server { listen 80; location / { root html; } }"
    ports: list[int] = []
    paths: list[str] = []
    catch_all = False
    for path, content in files.items():
        depth = 0
        for lineno, line in enumerate(content.splitlines(), 1):
            text = line.split("#", 1)[0]
            depth += text.count("{") - text.count("}")
            if depth < 0:
                return [], None, f'nginx: [emerg] unexpected "}}" in {path}:{lineno}'
        if depth > 0:
            count = len(content.splitlines())
            return [], None, f'nginx: [emerg] unexpected end of file, expecting "}}" in {path}:{count}'
        for m in re.finditer(r"\blisten\s+(?:[\w.\[\]:]*:)?(\d+)", content):
            ports.append(int(m.group(1)))
        for m in re.finditer(r"\blocation\s+(?:=\s*|\^~\s*)?(/[^\s{]*)\s*\{([^}]*)\}", content):
            location, body = m.group(1), m.group(2)
            if location == "/" and ("proxy_pass" in body or "return" in body or "try_files" in body
                                    or path != "/etc/nginx/conf.d/default.conf"):
                catch_all = True
            paths.append(location)
    if not ports:
        ports = [80]
    served: tuple[str, ...] | None = () if catch_all else tuple(dict.fromkeys((*_NGINX_DEFAULT_PATHS, *paths)))
    return sorted(set(ports)), served, None


def _nginx(call: Invocation) -> Program:
    args = call.args
    if "-v" in args or "-V" in args:
        call.error("nginx version: nginx/1.27.4")
        return 0
    ports, paths, error = _nginx_config(call)
    stamp = log_stamp(call, "%Y/%m/%d %H:%M:%S")
    if "-t" in args:
        if error:
            call.error(error)
            call.error("nginx: configuration file /etc/nginx/nginx.conf test failed")
            return 1
        call.error("nginx: the configuration file /etc/nginx/nginx.conf syntax is ok")
        call.error("nginx: configuration file /etc/nginx/nginx.conf test is successful")
        return 0
    if error:
        call.error(f"{stamp} [emerg] 1#1: {error.removeprefix('nginx: [emerg] ')}")
        call.error(error)
        return 1
    logs = [f"{stamp} [notice] 1#1: using the \"epoll\" event method",
            f"{stamp} [notice] 1#1: nginx/1.27.4",
            f"{stamp} [notice] 1#1: built by gcc 12.2.0 (Debian 12.2.0-14)",
            f"{stamp} [notice] 1#1: OS: Linux 6.1.0-28-amd64",
            f"{stamp} [notice] 1#1: getrlimit(RLIMIT_NOFILE): 1048576:1048576",
            f"{stamp} [notice] 1#1: start worker processes"]
    logs += [f"{stamp} [notice] 1#1: start worker process {29 + i}" for i in range(4)]
    for line in logs:
        call.error(line)
    return (yield from serve(call, ports=tuple(ports), http_paths=paths, startup_seconds=0.5,
                             memory_mb=12))


def _nginx_entrypoint(call: Invocation) -> Program:
    args = call.args
    if args and args[0] in ("nginx", "nginx-debug") and not call.ctx.env.get("NGINX_ENTRYPOINT_QUIET_LOGS"):
        for line in (
            "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
            "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
            "/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
            "10-listen-on-ipv6-by-default.sh: info: Getting the checksum of /etc/nginx/conf.d/default.conf",
            "10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf",
            "/docker-entrypoint.sh: Sourcing /docker-entrypoint.d/15-local-resolvers.envsh",
            "/docker-entrypoint.sh: Launching /docker-entrypoint.d/20-envsubst-on-templates.sh",
            "/docker-entrypoint.sh: Launching /docker-entrypoint.d/30-tune-worker-processes.sh",
            "/docker-entrypoint.sh: Configuration complete; ready for start up",
        ):
            call.write(line + "\n")
    return (yield from exec_rest(call, list(args) or ["nginx", "-g", "daemon off;"]))


# -------------------------------------------------------------------------------------- redis
def redis_server(call: Invocation) -> Program:
    return (yield from redis_like_server(call, product="Redis", version="7.4.2", binary="redis-server"))


def redis_like_server(call: Invocation, *, product: str, version: str, binary: str) -> Program:
    """`<binary> [config] [--option value ...]` with the startup lines Redis and its fork Valkey
    both print, under their own name and version."""
    args = call.args
    port = int(argv_flag(args, "--port", default="6379") or 6379)
    ts = log_stamp(call, "%d %b %Y %H:%M:%S.000")
    config_file = args[0] if args and not args[0].startswith("-") else None
    if config_file is not None and call.read_file(config_file) is None:
        call.write(f"1:C {ts} # Fatal error, can't open config file '{config_file}': "
                   "No such file or directory\n")
        return 1
    logs = [f"1:C {ts} # WARNING Memory overcommit must be enabled! Without it, a background save or "
            "replication may fail under low memory condition. To fix this issue add "
            "'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command "
            "'sysctl vm.overcommit_memory=1' for this to take effect.",
            f"1:C {ts} * oO0OoO0OoO0Oo {product} is starting oO0OoO0OoO0Oo",
            f"1:C {ts} * {product} version={version}, bits=64, commit=00000000, modified=0, pid=1, just started"]
    if config_file is None:
        logs.append(f"1:C {ts} # Warning: no config file specified, using the default config. In order "
                    f"to specify a config file use {binary} /path/to/{binary.split('-')[0]}.conf")
    else:
        logs.append(f"1:C {ts} * Configuration loaded")
    logs += [f"1:M {ts} * monotonic clock: POSIX clock_gettime",
             f"1:M {ts} * Running mode=standalone, port={port}.",
             f"1:M {ts} * Server initialized",
             f"1:M {ts} * Ready to accept connections tcp"]
    return (yield from serve(call, ports=(port,), http_paths=None, startup_seconds=0.2,
                             memory_mb=8, logs=logs))


def docker_entrypoint(server: str, binary: CommandFn, *, conf_first: bool = False) -> CommandFn:
    """Official-image `docker-entrypoint.sh`: a flag-only argv is passed to the server; with
    `conf_first` (the Redis and Valkey entrypoints' `${1%.conf}` test) so is one starting with a
    `*.conf` file."""

    def run(call: Invocation) -> Program:
        args = list(call.args)
        if not args or args[0].startswith("-") or (conf_first and args[0].endswith(".conf")):
            args = [server, *args]
        if args[0] == server:
            sub = Invocation([server, *args[1:]], call.ctx, call.shell, call.stdin)
            result = binary(sub)
            if isinstance(result, int) or result is None:
                for effect in sub.pending:
                    yield effect
                return int(result or 0)
            for effect in sub.pending:
                yield effect
            sub.pending.clear()
            status = yield from flush_writes(sub, result)
            return status
        return (yield from exec_rest(call, args))

    return run


def flush_writes(call: Invocation, gen: Program) -> Program:
    """Drive a command generator, interleaving its buffered writes (like shell.drive)."""
    try:
        effect = next(gen)
        while True:
            for pending in call.pending:
                yield pending
            call.pending.clear()
            yield effect
            effect = next(gen)
    except StopIteration as stop:
        for pending in call.pending:
            yield pending
        call.pending.clear()
        return int(stop.value or 0)


def _memcached(call: Invocation) -> Program:
    port = int(argv_flag(call.args, "-p", "--port", default="11211") or 11211)
    memory = int(argv_flag(call.args, "-m", "--memory-limit", default="64") or 64)
    return (yield from serve(call, ports=(port,), http_paths=None, startup_seconds=0.1,
                             memory_mb=min(memory, 8) + 2))


def _mongod(call: Invocation) -> Program:
    port = int(argv_flag(call.args, "--port", default="27017") or 27017)
    date = log_stamp(call, "%Y-%m-%dT%H:%M:%S.000+00:00")
    def entry(component: str, ident: int, ctx: str, msg: str, attr: str = "") -> str:
        attr_part = f',"attr":{attr}' if attr else ""
        return (f'{{"t":{{"$date":"{date}"}},"s":"I",  "c":"{component}",  "id":{ident},'
                f'   "ctx":"{ctx}","msg":"{msg}"{attr_part}}}')

    logs = [
        entry("CONTROL", 23285, "main", "Automatically disabling TLS 1.0, to force-enable TLS 1.0 "
              "specify --sslDisabledProtocols 'none'"),
        entry("CONTROL", 4615611, "initandlisten", "MongoDB starting",
              f'{{"pid":1,"port":{port},"dbPath":"/data/db","architecture":"64-bit",'
              f'"host":"{call.ctx.hostname}"}}'),
        entry("NETWORK", 23015, "listener", "Listening on", '{"address":"0.0.0.0"}'),
        entry("NETWORK", 23016, "listener", "Waiting for connections", f'{{"port":{port},"ssl":"off"}}'),
    ]
    return (yield from serve(call, ports=(port,), http_paths=None, startup_seconds=2,
                             memory_mb=160, logs=logs))


_PG_NO_PASSWORD = """Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the
       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".

       You may also use "POSTGRES_HOST_AUTH_METHOD=trust" to allow all
       connections without a password. This is *not* recommended.

       See PostgreSQL documentation about "trust":
       https://www.postgresql.org/docs/current/auth-trust.html
"""


def _postgres(call: Invocation) -> Program:
    env = call.shell.exported_env()
    if not env.get("POSTGRES_PASSWORD") and env.get("POSTGRES_HOST_AUTH_METHOD") != "trust":
        call.write(_PG_NO_PASSWORD, "stderr")
        return 1
    port = int(argv_flag(call.args, "-p", "--port", default="5432") or 5432)
    ts = log_stamp(call, "%Y-%m-%d %H:%M:%S.000 UTC")
    logs = ["The files belonging to this database system will be owned by user \"postgres\".",
            "Success. You can now start the database server using:",
            "PostgreSQL init process complete; ready for start up.",
            "",
            f"{ts} [1] LOG:  starting PostgreSQL 17.2 (Debian 17.2-1.pgdg120+1) on x86_64-pc-linux-gnu, "
            "compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit",
            f"{ts} [1] LOG:  listening on IPv4 address \"0.0.0.0\", port {port}",
            f"{ts} [1] LOG:  listening on Unix socket \"/var/run/postgresql/.s.PGSQL.{port}\""]
    ready = [f"{ts} [1] LOG:  database system is ready to accept connections"]
    return (yield from serve(call, ports=(port,), http_paths=None, startup_seconds=3,
                             memory_mb=40, logs=logs, ready_logs=ready))


# ------------------------------------------------------------------------------------- python
def _python(call: Invocation) -> Program:
    args = call.args
    if len(args) >= 2 and args[0] == "-m" and args[1] == "http.server":
        port = int(next((a for a in args[2:] if a.isdigit()), "8000"))
        files = tuple(sorted(p[len(call.ctx.cwd.rstrip("/")):] for p in call.ctx.files
                             if p.startswith(call.ctx.cwd.rstrip("/") + "/")))
        return (yield from serve(call, ports=(port,), http_paths=("/", *files), startup_seconds=0.3,
                                 memory_mb=18, ready_logs=[
                                     f"Serving HTTP on 0.0.0.0 port {port} (http://0.0.0.0:{port}/) ..."]))
    if args and args[0] == "-c":
        return (yield from _python_snippet(call, args[1] if len(args) > 1 else ""))
    if args and args[0] in ("-V", "--version"):
        call.write("Python 3.12.9\n")
        return 0
    if args and not args[0].startswith("-"):
        if call.read_file(args[0]) is None:
            call.error(f"{call.argv[0]}: can't open file '{call.shell.abspath(args[0])}': "
                       "[Errno 2] No such file or directory")
            return 2
        return 0
    return 0  # no tty, stdin empty: the REPL sees EOF and exits


def _python_snippet(call: Invocation, code: str) -> Program:
    """Just enough of `python -c` for container one-liners: print, time.sleep, sys.exit, raise."""
    for stmt in re.split(r";|\n", code):
        stmt = stmt.strip()
        if not stmt or stmt.startswith(("import ", "from ")):
            continue
        m = re.fullmatch(r"print\((['\"])(.*)\1\)", stmt)
        if m:
            call.write(m.group(2) + "\n")
            continue
        m = re.fullmatch(r"time\.sleep\(([\d.e+]+)\)", stmt)
        if m:
            yield Sleep(float(m.group(1)))
            continue
        m = re.fullmatch(r"sys\.exit\((\d*)\)", stmt)
        if m:
            return int(m.group(1) or 0)
        m = re.fullmatch(r"raise (\w+)\((['\"]?)(.*)\2\)", stmt)
        if m:
            call.error("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
                       f"{m.group(1)}: {m.group(3)}")
            return 1
        if stmt.startswith("while True"):
            yield Sleep(FOREVER)
    return 0


# ------------------------------------------------------------------------------ control plane
def _coredns(call: Invocation) -> Program:
    conf = argv_flag(call.args, "-conf", default="Corefile") or "Corefile"
    corefile = call.read_file(conf)
    if corefile is None:
        call.error(f"plugin/file: open {conf}: no such file or directory" if conf != "Corefile"
                   else "Corefile: no such file or directory")
        return 1
    if corefile.count("{") != corefile.count("}"):
        call.error(f"{conf}:{len(corefile.splitlines())} - Error during parsing: Unexpected EOF")
        return 1
    http_ports: dict[int, tuple[str, ...] | None] = {}
    if re.search(r"^\s*health\b", corefile, re.M):
        m = re.search(r"^\s*health\s+:?(\d+)", corefile, re.M)
        http_ports[int(m.group(1)) if m else 8080] = ("/health",)
    if re.search(r"^\s*ready\b", corefile, re.M):
        m = re.search(r"^\s*ready\s+:?(\d+)", corefile, re.M)
        http_ports[int(m.group(1)) if m else 8181] = ("/ready",)
    m = re.search(r"^\s*prometheus\s+(?:[\d.]*):?(\d+)?", corefile, re.M)
    if m:
        http_ports[int(m.group(1) or 9153)] = ("/metrics",)
    digest = hashlib.sha512(corefile.encode()).hexdigest()
    logs = [".:53", f"[INFO] plugin/reload: Running configuration SHA512 = {digest}",
            "CoreDNS-1.11.3", "linux/amd64, go1.21.11, a6338e9"]
    return (yield from serve(call, ports=(53, *sorted(http_ports)), udp_ports=(53,), http_ports=http_ports,
                             http_paths=None, startup_seconds=0.5, memory_mb=14, logs=logs))


def _control_plane(name: str, ports: dict[int, tuple[str, ...]], memory_mb: float,
                   startup: float, logs: tuple[str, ...] = ()) -> CommandFn:
    def run(call: Invocation) -> Program:
        klog = log_stamp(call, "%m%d %H:%M:%S.000000")
        lines = [f"I{klog}       1 {line}" for line in logs]
        for line in lines:
            call.error(line)
        return (yield from serve(call, ports=tuple(ports), http_ports=dict(ports), http_paths=None,
                                 startup_seconds=startup, memory_mb=memory_mb, cpu_cores=0.02))

    run.__name__ = name
    return run


# ------------------------------------------------------------------------------------ catalogue
def _server(name: str, ports: tuple[int, ...], paths: tuple[str, ...] | None, memory_mb: float,
            startup: float, logs: tuple[str, ...] = (), udp: tuple[int, ...] = ()) -> CommandFn:
    def run(call: Invocation) -> Program:
        return (yield from serve(call, ports=ports, udp_ports=udp, http_paths=paths,
                                 startup_seconds=startup, memory_mb=memory_mb, logs=list(logs)))

    run.__name__ = name
    return run


def _builtin_catalogue() -> list[ImageSpec]:
    from sregym.twin.topology import KUBERNETES_VERSION

    k8s = (KUBERNETES_VERSION, "v1.31.4", "v1.30.8")
    nginx_cmds: dict[str, CommandFn] = {"nginx": _nginx, "nginx-debug": _nginx,
                                        "docker-entrypoint.sh": _nginx_entrypoint}
    redis_cmds: dict[str, CommandFn] = {"redis-server": redis_server}
    redis_cmds["docker-entrypoint.sh"] = docker_entrypoint("redis-server", redis_server, conf_first=True)
    memcached_cmds: dict[str, CommandFn] = {"memcached": _memcached,
                                            "docker-entrypoint.sh": docker_entrypoint("memcached", _memcached)}
    mongo_cmds: dict[str, CommandFn] = {"mongod": _mongod,
                                        "docker-entrypoint.sh": docker_entrypoint("mongod", _mongod)}
    pg_cmds: dict[str, CommandFn] = {"postgres": _postgres,
                                     "docker-entrypoint.sh": docker_entrypoint("postgres", _postgres)}
    py_cmds: dict[str, CommandFn] = {n: _python for n in ("python", "python3", "python3.12")}
    pause: dict[str, CommandFn] = {"pause": _server("pause", (), None, 0.3, 0)}

    def cp(name: str, ports: dict[int, tuple[str, ...]], mem: float, startup: float,
           logs: tuple[str, ...] = ()) -> dict[str, CommandFn]:
        return {name: _control_plane(name, ports, mem, startup, logs)}

    return [
        ImageSpec("docker.io/library/nginx",
                  ("1.25", "1.25.5", "1.26", "1.26.3", "1.27", "1.27.0", "1.27.3", "1.27.4", "1.28",
                   "1.28.0", "latest", "stable", "mainline", "alpine", "1.27-alpine", "1.27.4-alpine",
                   "stable-alpine", "1.26-alpine", "1.25-alpine"),
                  size_mb=72.08, description="nginx web server", ports=(80,),
                  http_paths=_NGINX_DEFAULT_PATHS, startup_seconds=0.5, memory_mb=12,
                  entrypoint=("/docker-entrypoint.sh",), cmd=("nginx", "-g", "daemon off;"),
                  shell="dash", commands=nginx_cmds),
        ImageSpec("docker.io/library/busybox",
                  ("1.35", "1.35.0", "1.36", "1.36.1", "1.37", "1.37.0", "latest", "stable", "musl",
                   "glibc", "uclibc", "1.36-musl", "1.36.1-glibc"),
                  size_mb=4.27, description="BusyBox userland", cmd=("sh",), shell="ash"),
        ImageSpec("docker.io/library/alpine",
                  ("3.18", "3.18.9", "3.19", "3.19.4", "3.20", "3.20.3", "3.21", "3.21.2", "3.21.3",
                   "3", "latest", "edge"),
                  size_mb=7.83, description="Alpine Linux", cmd=("/bin/sh",), shell="ash"),
        ImageSpec("docker.io/curlimages/curl",
                  ("8.5.0", "8.8.0", "8.10.1", "8.11.1", "8.12.1", "latest"),
                  size_mb=23.8, description="curl on Alpine", entrypoint=("/entrypoint.sh",),
                  cmd=("curl",), shell="ash",
                  commands={"/entrypoint.sh": lambda call: exec_rest(call, list(call.args) or ["curl"]),
                            "entrypoint.sh": lambda call: exec_rest(call, list(call.args) or ["curl"])}),
        ImageSpec("docker.io/polinux/stress", ("latest", "1.0.4"), size_mb=9.74,
                  description="stress load generator on Alpine", cmd=("stress",), shell="ash"),
        ImageSpec("docker.io/library/redis",
                  ("6.2", "6.2.16", "7.0", "7.2", "7.2.7", "7.4", "7.4.2", "7", "latest", "alpine",
                   "7-alpine", "7.4-alpine", "7.2-alpine"),
                  size_mb=117.2, description="Redis", ports=(6379,), memory_mb=8,
                  entrypoint=("docker-entrypoint.sh",), cmd=("redis-server",), shell="dash",
                  commands=redis_cmds),
        ImageSpec("docker.io/library/memcached",
                  ("1.6", "1.6.21", "1.6.32", "1.6.34", "1", "latest", "alpine", "1.6-alpine"),
                  size_mb=84.5, description="memcached", ports=(11211,), memory_mb=4,
                  entrypoint=("docker-entrypoint.sh",), cmd=("memcached",), shell="dash",
                  commands=memcached_cmds),
        ImageSpec("docker.io/library/mongo",
                  ("4.4", "4.4.6", "4.4.29", "5.0", "6.0", "6.0.19", "7.0", "7.0.16", "8.0", "8.0.4",
                   "latest"),
                  size_mb=855.4, description="MongoDB", ports=(27017,), memory_mb=160,
                  startup_seconds=2, entrypoint=("docker-entrypoint.sh",), cmd=("mongod",),
                  shell="dash", commands=mongo_cmds),
        ImageSpec("docker.io/library/postgres",
                  ("14", "15", "15.10", "16", "16.6", "17", "17.2", "latest", "alpine", "16-alpine",
                   "17-alpine"),
                  size_mb=438.2, description="PostgreSQL", ports=(5432,), memory_mb=40,
                  startup_seconds=3, entrypoint=("docker-entrypoint.sh",), cmd=("postgres",),
                  shell="dash", commands=pg_cmds),
        ImageSpec("docker.io/library/python",
                  ("3.11", "3.11-slim", "3.12", "3.12-slim", "3.12.9", "3.13", "3.13-slim", "3.13.2",
                   "3-alpine", "3.12-alpine", "alpine", "slim", "latest"),
                  size_mb=1019.6, description="Python", cmd=("python3",), shell="dash",
                  commands=py_cmds),
        ImageSpec("registry.k8s.io/pause", ("3.8", "3.9", "3.10"), size_mb=0.74, shell="",
                  entrypoint=("/pause",), commands=pause),
        ImageSpec("registry.k8s.io/coredns/coredns", ("v1.10.1", "v1.11.1", "v1.11.3", "v1.12.0"),
                  size_mb=61.2, ports=(53, 8080, 8181, 9153), shell="", entrypoint=("/coredns",),
                  commands={"coredns": _coredns}),
        ImageSpec("registry.k8s.io/kube-proxy", k8s, size_mb=95.3, shell="dash",
                  entrypoint=("/usr/local/bin/kube-proxy",),
                  commands=cp("kube-proxy", {10256: ("/healthz", "/livez"), 10249: ("/metrics",)}, 20, 0.5,
                              ('server_linux.go:66] "Using iptables proxy"',
                               'server.go:839] "Version info" version="' + KUBERNETES_VERSION + '"',
                               'shared_informer.go:320] Caches are synced for service config'))),
        ImageSpec("registry.k8s.io/etcd", ("3.5.15-0", "3.5.16-0", "3.5.17-0"), size_mb=149.2, shell="",
                  entrypoint=(), commands=cp("etcd", {2379: ("/health",), 2381: ("/health", "/metrics", "/readyz", "/livez")},
                                             60, 1.0)),
        ImageSpec("registry.k8s.io/kube-apiserver", k8s, size_mb=98.4, shell="",
                  commands=cp("kube-apiserver", {6443: ("/livez", "/readyz", "/healthz", "/version")}, 250,
                              3.0, ('options.go:228] external host was not specified, using 172.18.0.2',
                                    'server.go:144] Version: ' + KUBERNETES_VERSION))),
        ImageSpec("registry.k8s.io/kube-controller-manager", k8s, size_mb=90.7, shell="",
                  commands=cp("kube-controller-manager", {10257: ("/healthz",)}, 50, 1.0,
                              ('serving.go:386] Generated self-signed cert in-memory',
                               'leaderelection.go:257] attempting to acquire leader lease '
                               'kube-system/kube-controller-manager...'))),
        ImageSpec("registry.k8s.io/kube-scheduler", k8s, size_mb=69.6, shell="",
                  commands=cp("kube-scheduler", {10259: ("/healthz", "/livez", "/readyz")}, 25, 1.0,
                              ('serving.go:386] Generated self-signed cert in-memory',
                               'leaderelection.go:257] attempting to acquire leader lease '
                               'kube-system/kube-scheduler...'))),
        ImageSpec("docker.io/fluent/fluent-bit", ("2.2", "3.0", "3.1", "3.1.9", "3.2", "3.2.4", "latest"),
                  size_mb=85.1, ports=(2020,), shell="", entrypoint=("/fluent-bit/bin/fluent-bit",),
                  cmd=("-c", "/fluent-bit/etc/fluent-bit.conf"),
                  commands={"fluent-bit": _server("fluent-bit", (2020,), ("/", "/api/v1/health",
                                                                          "/api/v1/metrics"), 10, 0.3,
                                                  ("Fluent Bit v3.2.4",
                                                   "* Copyright (C) 2015-2024 The Fluent Bit Authors",
                                                   "[ info] [fluent bit] version=3.2.4, commit=, pid=1",
                                                   "[ info] [http_server] listen iface=0.0.0.0 tcp_port=2020",
                                                   "[ info] [sp] stream processor started"))}),
        ImageSpec("docker.io/jaegertracing/all-in-one", ("1.57", "1.60", "1.62.0", "1.64.0", "1.65.0", "latest"),
                  size_mb=63.4, ports=(16686, 14269, 4317, 4318, 14268, 9411), shell="",
                  entrypoint=("/go/bin/all-in-one-linux",),
                  commands={"all-in-one-linux": _server(
                      "all-in-one", (16686, 14269, 4317, 4318, 14268), (), 30, 1.0,
                      ('{"level":"info","msg":"Starting jaeger-collector gRPC server","grpc.host-port":"[::]:14250"}',
                       '{"level":"info","msg":"Query server started","http_addr":"[::]:16686"}'),
                      udp=(6831, 6832))}),
        ImageSpec("docker.io/prom/prometheus", ("v2.53.0", "v2.54.1", "v2.55.1", "v3.0.1", "v3.1.0", "v3.2.1",
                                                "latest"),
                  size_mb=295.1, ports=(9090,), shell="ash", entrypoint=("/bin/prometheus",),
                  cmd=("--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"),
                  commands={"prometheus": _server(
                      "prometheus", (9090,), ("/", "/-/healthy", "/-/ready", "/metrics", "/graph",
                                              "/api/v1/query", "/api/v1/targets"), 80, 2.0,
                      ('ts=2026-01-05T09:00:00.000Z caller=main.go:601 level=info msg="Starting Prometheus Server"',
                       'ts=2026-01-05T09:00:00.000Z caller=web.go:571 level=info component=web '
                       'msg="Start listening for connections" address=0.0.0.0:9090'))}),
        ImageSpec("docker.io/hashicorp/consul", ("1.15", "1.15.4", "1.18", "1.19", "1.20", "1.20.2", "latest"),
                  size_mb=158.4, ports=(8500, 8300, 8301, 8302), shell="ash",
                  entrypoint=("docker-entrypoint.sh",), cmd=("agent", "-dev", "-client", "0.0.0.0"),
                  commands={"docker-entrypoint.sh": _server(
                      "consul", (8500, 8300, 8301, 8302), (), 40, 1.5,
                      ("==> Starting Consul agent...",
                       "               Version: '1.20.2'",
                       "           Client Addr: [0.0.0.0] (HTTP: 8500, HTTPS: -1, gRPC: 8502, DNS: 8600)",
                       "==> Log data will now stream in as it occurs:",
                       "[INFO]  agent: Consul agent running!"), udp=(8600,))}),
        # Cortex (a tenant's metrics ingester: `-target=ingester`), HTTP 9009 and gRPC 9095.
        ImageSpec("docker.io/grafana/cortex", ("v1.16.1", "v1.17.1", "v1.18.1", "latest"), size_mb=92.6,
                  ports=(9009, 9095), memory_mb=220, startup_seconds=2.0, shell="",
                  startup_logs=('level=info ts=2026-01-05T09:00:00.000Z caller=main.go:218 msg="Starting Cortex" '
                                'version="(version=1.16.1, branch=HEAD)"',
                                'level=info ts=2026-01-05T09:00:00.000Z caller=server.go:323 http=[::]:9009 '
                                'grpc=[::]:9095 msg="server listening on addresses"',
                                'level=info ts=2026-01-05T09:00:02.000Z caller=lifecycler.go:614 msg="instance '
                                'not found in ring, adding with no tokens" ring=ingester',
                                'level=info ts=2026-01-05T09:00:02.000Z caller=cortex.go:436 msg="Cortex started"')),
    ]


# Images a kind node already has on disk (node.status.images at boot).
PRELOADED_IMAGES = (
    "registry.k8s.io/pause:3.10",
    "registry.k8s.io/coredns/coredns:v1.11.3",
)


# Images of add-ons installed with the cluster (the monitoring stack), long pulled before any app.
_ADDON_IMAGES: list[str] = []


def preload_image(ref: str) -> None:
    """Count `ref` among the images every node already has (an add-on installed with the cluster)."""
    if ref not in _ADDON_IMAGES:
        _ADDON_IMAGES.append(ref)


def preloaded_images() -> list[str]:
    from sregym.twin.topology import KUBERNETES_VERSION

    return [*PRELOADED_IMAGES, *_ADDON_IMAGES,
            "registry.k8s.io/etcd:3.5.16-0",
            f"registry.k8s.io/kube-apiserver:{KUBERNETES_VERSION}",
            f"registry.k8s.io/kube-controller-manager:{KUBERNETES_VERSION}",
            f"registry.k8s.io/kube-proxy:{KUBERNETES_VERSION}",
            f"registry.k8s.io/kube-scheduler:{KUBERNETES_VERSION}"]


for _spec in _builtin_catalogue():
    register_image(_spec)
