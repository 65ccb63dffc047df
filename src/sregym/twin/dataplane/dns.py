"""Cluster DNS from a pod's point of view: resolv.conf → CoreDNS (its Corefile) → an answer.

Half of "service X cannot reach Y" incidents are DNS: CoreDNS scaled to zero, a Corefile edit
that answers NXDOMAIN for one name, a pod with `dnsPolicy: Default` or `None` that never asks the
cluster DNS, a NetworkPolicy that blocks egress to UDP 53. So a lookup here walks the same path a
libc/Go stub resolver and CoreDNS would, and every one of those causes shows up as its real
symptom (NXDOMAIN, SERVFAIL, REFUSED or a timeout):

1. the pod's resolver config (`/etc/resolv.conf` as the kubelet writes it for the pod's
   `dnsPolicy`/`dnsConfig`: nameservers, search list, `ndots`, `timeout`, `attempts`) and its
   `/etc/hosts` (own hostname, `hostAliases`);
2. the candidate names (search list before or after the name itself, per `ndots`);
3. per candidate, each nameserver in turn: the cluster DNS Service (10.96.0.10) needs ready
   endpoints that the pod may reach (NetworkPolicy egress/ingress on UDP 53, chaos partitions),
   else the query times out; other nameservers are "the upstream" (see below);
4. CoreDNS processing of the Corefile in `kube-system/coredns`, with the plugins in CoreDNS's
   compiled order (`rewrite` → `template` → `hosts` → `kubernetes` → `forward`): Services
   (ClusterIP, headless → endpoint IPs, ExternalName → CNAME), endpoint hostnames
   (`web-0.web.ns.svc.cluster.local`), pod records (`10-244-1-5.ns.pod.cluster.local`), PTR;
5. DNSChaos through `twin.services.chaos.dns(pod, fqdn)` ("error" ⇒ SERVFAIL, "random" ⇒
   a random address), for pods that query the cluster DNS.

The twin has no internet. "Upstream" resolvers (the node's resolver 172.18.0.1 that CoreDNS
forwards to via `/etc/resolv.conf`, and well-known public resolvers such as 8.8.8.8) answer a
small fixed table of external names and NXDOMAIN for everything else, which is what a kind
cluster shows for cluster names asked of a non-cluster resolver (`dnsPolicy: Default` or
`None` + `nameservers: [8.8.8.8]` ⇒ `geo` is NXDOMAIN). Any other nameserver address does not
answer (timeout); a CoreDNS `forward` to such an address answers SERVFAIL.

A Corefile CoreDNS cannot parse makes a (re)starting CoreDNS exit; a running one keeps its last
good configuration (the `reload` plugin refuses a bad file). `corefile_errors(text)` returns the
messages CoreDNS would print, so the kubelet side can crash CoreDNS containers on them; the
resolver here keeps serving the last Corefile that parsed.

Answers are cached per simulated tick and store resourceVersion, so the data plane can resolve
thousands of calls per tick for the price of a dict lookup.
"""

from __future__ import annotations

import ipaddress
import re
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.node.bgp import bgp_routes_of
from sregym.twin.topology import CLUSTER_DNS_IP, CLUSTER_DOMAIN

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NODE_RESOLVER = "172.18.0.1"
# Resolvers outside the cluster that answer (from the fixed table below).
PUBLIC_RESOLVERS = frozenset({NODE_RESOLVER, "8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1",
                              "9.9.9.9", "149.112.112.112", "208.67.222.222", "208.67.220.220"})
# The "internet" as far as the twin goes: names an upstream resolver answers.
EXTERNAL_HOSTS: dict[str, tuple[str, ...]] = {
    "example.com": ("93.184.215.14",),
    "www.example.com": ("93.184.215.14",),
    "google.com": ("142.250.185.78",),
    "www.google.com": ("142.250.185.100",),
    "github.com": ("140.82.121.4",),
    "api.github.com": ("140.82.121.6",),
    "kubernetes.io": ("147.75.40.148",),
    "httpbin.org": ("54.243.135.26", "34.227.213.82"),
    "pypi.org": ("151.101.0.223", "151.101.64.223"),
    "registry-1.docker.io": ("54.227.20.253", "3.216.34.172"),
    "docker.io": ("54.198.86.24",),
    "auth.docker.io": ("54.236.113.205",),
    "registry.k8s.io": ("34.96.108.209",),
    "quay.io": ("34.224.196.162",),
    "ghcr.io": ("140.82.121.33",),
    "gcr.io": ("142.250.102.82",),
}
ERRORS = ("NXDOMAIN", "SERVFAIL", "REFUSED", "timeout")
_SEVERITY = {"NXDOMAIN": 0, "REFUSED": 1, "SERVFAIL": 2, "timeout": 3}
MAX_CNAME_DEPTH = 8


# =========================================================================================== answer
@dataclass(frozen=True)
class DnsAnswer:
    """The outcome of one name lookup as the pod's resolver sees it.

    `ok` is true for NOERROR, even with no address (an AAAA query for a v4-only name: `ips` is
    empty). `fqdn` is the name that answered (or, on failure, the last one tried); `message` is the
    text a Go client prints (`lookup geo on 10.96.0.10:53: no such host`), which applications log.
    `cname` is the canonical name for ExternalName Services; `server` the nameserver asked;
    `latency_ms` the resolver's time (timeouts × attempts for unreachable servers);
    `authoritative` is false for answers forwarded from upstream ("Non-authoritative answer").
    `names` holds PTR targets for reverse lookups (`record="PTR"`).
    """

    ok: bool
    ips: tuple[str, ...]
    error: str | None
    fqdn: str
    message: str
    cname: str | None = None
    server: str = ""
    latency_ms: float = 0.0
    authoritative: bool = True
    names: tuple[str, ...] = ()
    tried: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Reply:
    """One DNS response from one server (rcode "NOERROR" | an entry of ERRORS)."""

    rcode: str
    ips: tuple[str, ...] = ()
    cname: str | None = None
    names: tuple[str, ...] = ()
    authoritative: bool = True


_TIMEOUT = _Reply("timeout")


# ====================================================================================== resolv.conf
@dataclass(frozen=True)
class ResolverConfig:
    """What a stub resolver reads from /etc/resolv.conf (glibc defaults when absent)."""

    nameservers: tuple[str, ...]
    search: tuple[str, ...]
    ndots: int = 1
    timeout: float = 5.0
    attempts: int = 2


def parse_resolv_conf(text: str) -> ResolverConfig:
    servers: list[str] = []
    search: list[str] = []
    ndots, timeout, attempts = 1, 5.0, 2
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "nameserver" and len(words) > 1 and len(servers) < 3:
            servers.append(words[1])
        elif words[0] in ("search", "domain"):
            search = [w.rstrip(".") for w in words[1:]][:32]
        elif words[0] == "options":
            for opt in words[1:]:
                key, _, value = opt.partition(":")
                try:
                    if key == "ndots":
                        ndots = min(15, max(0, int(value)))
                    elif key == "timeout":
                        timeout = float(min(30, max(1, int(value))))
                    elif key == "attempts":
                        attempts = min(5, max(1, int(value)))
                except ValueError:
                    continue
    return ResolverConfig(tuple(servers) or ("127.0.0.1",), tuple(search), ndots, timeout, attempts)


def pod_resolver(pod: dict[str, Any] | None, namespace: str = "default") -> ResolverConfig:
    """The resolver config the kubelet gives this pod (None: a ClusterFirst pod in `namespace`)."""
    from sregym.twin.userland.fs import resolv_conf

    if pod is None:
        pod = {"metadata": {"namespace": namespace}, "spec": {}}
    return parse_resolv_conf(resolv_conf(pod))


def candidate_names(name: str, config: ResolverConfig, *, search: bool = True) -> list[str]:
    """Fully qualified names to try, in order (glibc res_search): a trailing dot means absolute;
    a name with at least `ndots` dots is tried as is first, else after the search list."""
    if name.endswith("."):
        return [name.lower()]
    name = name.lower()
    if not search or not config.search:
        return [name + "."]
    expanded = [f"{name}.{domain}." for domain in config.search]
    if name.count(".") >= config.ndots:
        return [name + ".", *expanded]
    return [*expanded, name + "."]


def hosts_lookup(hosts_text: str, name: str) -> tuple[str, ...]:
    """Addresses for `name` in an /etc/hosts text (IPv4 only), in file order."""
    wanted = name.lower().rstrip(".")
    out: list[str] = []
    for raw in hosts_text.splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) >= 2 and wanted in (w.lower() for w in words[1:]) and is_ipv4(words[0]):
            if words[0] not in out:
                out.append(words[0])
    return tuple(out)


def is_ipv4(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv4Address)
    except ValueError:
        return False


# ========================================================================================= Corefile
@dataclass
class Directive:
    name: str
    args: list[str]
    line: int
    block: list[Directive] | None = None


@dataclass
class ServerBlock:
    zones: list[tuple[str, int]]  # (zone with trailing dot, port)
    directives: list[Directive]
    line: int


@dataclass
class Corefile:
    blocks: list[ServerBlock]

    def block_for(self, qname: str, port: int = 53) -> tuple[ServerBlock, str] | None:
        """The server block whose zone is the longest suffix of qname (CoreDNS's dispatch)."""
        best: tuple[ServerBlock, str] | None = None
        for block in self.blocks:
            for zone, zport in block.zones:
                if zport == port and in_zone(qname, zone) and (best is None or len(zone) > len(best[1])):
                    best = (block, zone)
        return best


class CorefileError(ValueError):
    pass


# Plugins compiled into CoreDNS 1.11 (plugin.cfg), in execution order.
PLUGIN_ORDER = (
    "root", "metadata", "geoip", "cancel", "tls", "timeouts", "reload", "nsid", "bufsize", "bind",
    "debug", "trace", "ready", "health", "pprof", "prometheus", "errors", "log", "dnstap", "local",
    "dns64", "acl", "any", "chaos", "loadbalance", "tsig", "cache", "rewrite", "header", "dnssec",
    "autopath", "minimal", "template", "transfer", "hosts", "route53", "azure", "clouddns",
    "k8s_external", "kubernetes", "file", "auto", "secondary", "etcd", "loop", "forward", "grpc",
    "erratic", "whoami", "on", "sign", "view", "import",
)
_NEEDS_ARGS = {"forward": 2, "rewrite": 1, "template": 1, "file": 1, "import": 1}
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|(\{)|(\})|([^\s{}"]+)')


def _tokenize(text: str) -> list[tuple[str, int, bool]]:
    """(token, line, quoted) triples; comments run from `#` to the end of the line."""
    tokens: list[tuple[str, int, bool]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        for m in _TOKEN.finditer(line):
            if m.group(1) is not None:
                tokens.append((m.group(1).replace('\\"', '"'), number, True))
            else:
                tokens.append((m.group(0), number, False))
        tokens.append(("\n", number, False))
    return tokens


def _strip_comment(line: str) -> str:
    quoted = False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def parse_corefile(text: str, path: str = "Corefile") -> Corefile:
    """Parse a Corefile the way CoreDNS's caddyfile lexer does (server blocks of directives,
    one level of plugin blocks). Raises CorefileError with CoreDNS's message."""
    tokens = _tokenize(text)
    pos = 0
    blocks: list[ServerBlock] = []

    def fail(line: int, message: str) -> CorefileError:
        return CorefileError(f"{path}:{line} - Error during parsing: {message}")

    def skip_newlines() -> None:
        nonlocal pos
        while pos < len(tokens) and tokens[pos][0] == "\n":
            pos += 1

    last_line = max((t[1] for t in tokens), default=1)
    while True:
        skip_newlines()
        if pos >= len(tokens):
            break
        keys: list[str] = []
        start_line = tokens[pos][1]
        while pos < len(tokens) and tokens[pos][0] not in ("{", "\n"):
            keys.extend(k for k in tokens[pos][0].split(",") if k)
            pos += 1
        skip_newlines()
        if pos >= len(tokens) or tokens[pos][0] != "{":
            if not keys:
                break
            raise fail(start_line if pos >= len(tokens) else tokens[pos][1],
                       "Unexpected EOF" if pos >= len(tokens) else f"Unexpected token '{tokens[pos][0]}', expecting '{{'")
        pos += 1
        zones = [_parse_key(key, start_line, fail) for key in keys]
        directives: list[Directive] = []
        closed = False
        while pos < len(tokens):
            tok, line, quoted = tokens[pos]
            if tok == "\n":
                pos += 1
                continue
            if tok == "}" and not quoted:
                pos += 1
                closed = True
                break
            if tok == "{" and not quoted:
                raise fail(line, "Unexpected '{'")
            name = tok.lower()
            pos += 1
            args: list[str] = []
            block: list[Directive] | None = None
            while pos < len(tokens) and tokens[pos][0] != "\n":
                t, _t_line, t_quoted = tokens[pos]
                if t == "{" and not t_quoted:
                    pos += 1
                    block = []
                    sub_closed = False
                    current: Directive | None = None
                    while pos < len(tokens):
                        s, s_line, s_quoted = tokens[pos]
                        pos += 1
                        if s == "}" and not s_quoted:
                            sub_closed = True
                            break
                        if s == "{" and not s_quoted:
                            raise fail(s_line, "Unexpected '{'")
                        if s == "\n":
                            current = None
                            continue
                        if current is None:
                            current = Directive(s, [], s_line)
                            block.append(current)
                        else:
                            current.args.append(s)
                    if not sub_closed:
                        raise fail(last_line, "Unexpected EOF")
                    break
                if t == "}" and not t_quoted:
                    break
                args.append(t)
                pos += 1
            if name not in PLUGIN_ORDER:
                raise fail(line, f"Unknown directive '{tok}'")
            if len(args) < _NEEDS_ARGS.get(name, 0):
                raise fail(line, f"Wrong argument count or unexpected line ending after '{args[-1] if args else tok}'")
            directives.append(Directive(name, args, line, block))
        if not closed:
            raise fail(last_line, "Unexpected EOF")
        blocks.append(ServerBlock(zones, directives, start_line))
    if not blocks:
        raise CorefileError(f"{path}:{last_line} - Error during parsing: no server blocks")
    _validate(blocks, fail)
    return Corefile(blocks)


def _parse_key(key: str, line: int, fail: Any) -> tuple[str, int]:
    text = key
    for scheme in ("dns://", "tls://", "grpc://", "https://"):
        if text.startswith(scheme):
            text = text[len(scheme):]
    zone, port = text, 53
    if ":" in text:
        zone, _, port_text = text.rpartition(":")
        if not port_text.isdigit():
            raise fail(line, f"invalid port '{port_text}'")
        port = int(port_text)
    zone = (zone or ".").lower()
    if not zone.endswith("."):
        zone += "."
    return zone, port


def _validate(blocks: list[ServerBlock], fail: Any) -> None:
    """The setup-time checks of the plugins the twin interprets."""
    for block in blocks:
        seen: dict[str, int] = {}
        for directive in block.directives:
            if directive.name in ("kubernetes", "forward", "cache", "health", "ready", "loop",
                                  "errors", "prometheus", "reload", "loadbalance"):
                if directive.name in seen:
                    raise fail(directive.line, f"plugin/{directive.name}: this plugin can only be used once per Server Block")
                seen[directive.name] = directive.line
            if directive.name == "template":
                qclass = directive.args[0].upper()
                if qclass not in ("IN", "ANY", "CH", "CHAOS", "HS"):
                    raise fail(directive.line, f"plugin/template: invalid query class {directive.args[0]}")
                for sub in directive.block or []:
                    if sub.name == "rcode" and (not sub.args or sub.args[0].upper() not in _RCODES):
                        raise fail(sub.line, f"plugin/template: unknown rcode {sub.args[0] if sub.args else ''}")
                    if sub.name == "match":
                        for regex in sub.args:
                            try:
                                re.compile(_go_regex(regex))
                            except re.error as exc:
                                raise fail(sub.line, f"plugin/template: error parsing regexp: {exc}") from None
            if directive.name == "kubernetes":
                for sub in directive.block or []:
                    if sub.name == "pods" and (len(sub.args) != 1 or sub.args[0] not in ("disabled", "insecure", "verified")):
                        raise fail(sub.line, f"plugin/kubernetes: wrong value for pods: {' '.join(sub.args)},  must be one of: disabled, verified, insecure")
                    if sub.name not in _K8S_OPTIONS:
                        raise fail(sub.line, f"plugin/kubernetes: unknown property '{sub.name}'")


_RCODES = ("NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED")
_K8S_OPTIONS = {"pods", "fallthrough", "namespaces", "ttl", "endpoint", "tls", "kubeconfig",
                "labels", "namespace_labels", "noendpoints", "endpoint_pod_names", "ignore",
                "multicluster", "startup_timeout", "apiserver"}


def corefile_errors(text: str, path: str = "/etc/coredns/Corefile") -> list[str]:
    """The messages CoreDNS prints (then exits 1) when it cannot load `text`; [] when it loads.

    Meant for the kubelet side: a CoreDNS container whose mounted Corefile has errors should log
    these lines and crash (CrashLoopBackOff), while running replicas keep their old config."""
    try:
        parse_corefile(text, path)
    except CorefileError as exc:
        return [str(exc)]
    return []


def in_zone(qname: str, zone: str) -> bool:
    qname, zone = qname.lower(), zone.lower()
    return zone == "." or qname == zone or qname.endswith("." + zone)


def _go_regex(pattern: str) -> str:
    """Go RE2 named groups `(?P<x>...)` work in Python as is; `(?<x>...)` does not."""
    return re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", pattern)


# ==================================================================================== CoreDNS model
@dataclass
class _Lookup:
    """A query inside CoreDNS: the (possibly rewritten) name and what it asks."""

    qname: str
    qtype: str
    zone: str
    block: ServerBlock


class CoreDNS:
    """Answers queries the way CoreDNS with a given Corefile and cluster state would."""

    def __init__(self, twin: Twin, corefile: Corefile) -> None:
        self.twin = twin
        self.corefile = corefile
        self._services_by_ip: dict[str, dict[str, Any]] | None = None
        self._endpoint_names_by_ip: dict[str, str] | None = None

    # ---------------------------------------------------------------- entry
    def query(self, qname: str, qtype: str, depth: int = 0) -> _Reply:
        found = self.corefile.block_for(qname)
        if found is None:
            return _Reply("REFUSED")
        block, zone = found
        lookup = _Lookup(qname, qtype, zone, block)
        plugins = sorted(block.directives, key=lambda d: PLUGIN_ORDER.index(d.name))
        for directive in plugins:
            handler = getattr(self, f"_p_{directive.name}", None)
            if handler is None:
                continue
            reply = handler(directive, lookup, depth)
            if reply is not None:
                return reply
        return _Reply("SERVFAIL")  # "no next plugin found"

    # ------------------------------------------------------------- rewrite
    def _p_rewrite(self, d: Directive, q: _Lookup, depth: int) -> _Reply | None:
        rules = [d] if d.block is None else [Directive(s.name, s.args, s.line) for s in d.block]
        for rule in rules:
            args = [rule.name, *rule.args] if d.block is not None else list(rule.args)
            mode = "stop"
            if args and args[0] in ("stop", "continue"):
                mode, args = args[0], args[1:]
            if not args or args[0] != "name":
                continue
            args = args[1:]
            if "answer" in args:
                args = args[:args.index("answer")]
            kind = "exact"
            if len(args) >= 3 and args[0] in ("exact", "prefix", "suffix", "substring", "regex"):
                kind, args = args[0], args[1:]
            if len(args) < 2:
                continue
            new = _rewrite(q.qname, kind, args[0], args[1])
            if new is not None and new != q.qname:
                q.qname = new
                if mode == "stop":
                    break
        return None

    # ------------------------------------------------------------ template
    def _p_template(self, d: Directive, q: _Lookup, depth: int) -> _Reply | None:
        qclass = d.args[0].upper()
        qtype = d.args[1].upper() if len(d.args) > 1 else "ANY"
        zones = [z if z.endswith(".") else z + "." for z in d.args[2:]] or [z for z, _ in q.block.zones]
        if not any(in_zone(q.qname, z) for z in zones):
            return None
        if qclass not in ("IN", "ANY") or (qtype != "ANY" and qtype != q.qtype):
            return None
        regexes, answers, rcode, fall = [".*"], [], "NOERROR", None
        for sub in d.block or []:
            if sub.name == "match":
                regexes = sub.args if regexes == [".*"] else regexes + sub.args
            elif sub.name == "answer":
                answers.append(" ".join(sub.args))
            elif sub.name == "rcode" and sub.args:
                rcode = sub.args[0].upper()
            elif sub.name == "fallthrough":
                fall = sub.args
        for regex in regexes:
            m = re.search(_go_regex(regex), q.qname)
            if m is None:
                continue
            if rcode != "NOERROR":
                return _Reply(rcode)
            ips: list[str] = []
            cname = None
            for template in answers:
                rr = _render(template, q, m)
                fields = rr.split()
                if len(fields) >= 5 and fields[3].upper() == "A" and fields[2].upper() == "IN":
                    ips.append(fields[4])
                elif len(fields) >= 4 and fields[-2].upper() == "A":
                    ips.append(fields[-1])
                elif len(fields) >= 2 and fields[-2].upper() == "CNAME":
                    cname = fields[-1]
            if cname and not ips and depth < MAX_CNAME_DEPTH:
                target = self.query(cname if cname.endswith(".") else cname + ".", q.qtype, depth + 1)
                return _Reply(target.rcode, target.ips, cname.rstrip("."), authoritative=True)
            return _Reply("NOERROR", tuple(ips), cname.rstrip(".") if cname else None)
        if fall is not None and (not fall or any(in_zone(q.qname, z if z.endswith(".") else z + ".")
                                                 for z in fall)):
            return None
        return _Reply("NXDOMAIN")

    # --------------------------------------------------------------- hosts
    def _p_hosts(self, d: Directive, q: _Lookup, depth: int) -> _Reply | None:
        zones = [z if z.endswith(".") else z + "." for z in d.args[1:]] or [z for z, _ in q.block.zones]
        if not any(in_zone(q.qname, z) for z in zones):
            return None
        entries: dict[str, list[str]] = {"localhost.": ["127.0.0.1"]}
        fall: list[str] | None = None
        for sub in d.block or []:
            if sub.name == "fallthrough":
                fall = sub.args
            elif is_ipv4(sub.name) or ":" in sub.name:
                for host in sub.args:
                    key = host.lower().rstrip(".") + "."
                    entries.setdefault(key, []).append(sub.name)
        ips = [ip for ip in entries.get(q.qname, []) if is_ipv4(ip)]
        if q.qname in entries:
            return _Reply("NOERROR", tuple(ips) if q.qtype == "A" else ())
        if fall is not None and (not fall or any(in_zone(q.qname, z if z.endswith(".") else z + ".")
                                                 for z in fall)):
            return None
        return _Reply("NXDOMAIN")

    # ---------------------------------------------------------- kubernetes
    def _p_kubernetes(self, d: Directive, q: _Lookup, depth: int) -> _Reply | None:
        zones = [z if z.endswith(".") else z + "." for z in d.args] or [z for z, _ in q.block.zones]
        zone = max((z for z in zones if in_zone(q.qname, z)), key=len, default=None)
        if zone is None:
            return None
        pods_mode, fall, namespaces = "disabled", None, None
        for sub in d.block or []:
            if sub.name == "pods" and sub.args:
                pods_mode = sub.args[0]
            elif sub.name == "fallthrough":
                fall = sub.args
            elif sub.name == "namespaces":
                namespaces = set(sub.args)
        if zone.endswith("in-addr.arpa.") or q.qtype == "PTR":
            reply = self._reverse(q.qname) if q.qtype == "PTR" else None
        else:
            reply = self._forward_zone(q, zone, pods_mode, namespaces, depth)
        if reply is not None and reply.rcode != "NXDOMAIN":
            return reply
        if fall is not None and (not fall or any(in_zone(q.qname, z if z.endswith(".") else z + ".")
                                                 for z in fall)):
            return None
        return reply or _Reply("NXDOMAIN")

    def _forward_zone(self, q: _Lookup, zone: str, pods_mode: str, namespaces: set[str] | None,
                      depth: int) -> _Reply:
        rel = q.qname[: -len(zone)].rstrip(".") if zone != "." else q.qname.rstrip(".")
        labels = rel.split(".") if rel else []
        if len(labels) < 2:
            return _Reply("NXDOMAIN")
        kind, namespace = labels[-1], labels[-2]
        if namespaces is not None and namespace not in namespaces:
            return _Reply("NXDOMAIN")
        store = self.twin.store
        if kind == "pod" and len(labels) == 3:
            if pods_mode == "disabled" or store.peek("Namespace", None, namespace) is None:
                return _Reply("NXDOMAIN")
            ip = labels[0].replace("-", ".")
            if not is_ipv4(ip):
                return _Reply("NXDOMAIN")
            if pods_mode == "verified" and not any(
                    get_path(p, "status", "podIP") == ip for p in store.scan("Pod", namespace)):
                return _Reply("NXDOMAIN")
            return _Reply("NOERROR", (ip,) if q.qtype == "A" else ())
        if kind != "svc" or len(labels) not in (3, 4):
            return _Reply("NXDOMAIN")
        service = store.peek("Service", namespace, labels[-3])
        if service is None:
            return _Reply("NXDOMAIN")
        spec = service.get("spec") or {}
        if len(labels) == 4:  # endpoint name of a headless service
            if spec.get("clusterIP") != "None":
                return _Reply("NXDOMAIN")
            for ip, hostname in self._endpoint_addresses(service):
                if labels[0] in (hostname, ip.replace(".", "-")):
                    return _Reply("NOERROR", (ip,) if q.qtype == "A" else ())
            return _Reply("NXDOMAIN")
        if spec.get("type") == "ExternalName" or spec.get("externalName"):
            target = str(spec.get("externalName") or "").rstrip(".")
            if not target:
                return _Reply("NXDOMAIN")
            if depth >= MAX_CNAME_DEPTH:
                return _Reply("SERVFAIL", cname=target)
            resolved = self.query(target + ".", q.qtype, depth + 1)
            return _Reply("NOERROR" if resolved.rcode == "NXDOMAIN" else resolved.rcode,
                          resolved.ips, target, authoritative=True)
        cluster_ip = spec.get("clusterIP")
        if cluster_ip == "None":
            ips = tuple(ip for ip, _ in self._endpoint_addresses(service))
            if not ips:
                return _Reply("NXDOMAIN")
            return _Reply("NOERROR", ips if q.qtype == "A" else ())
        if not cluster_ip:
            return _Reply("NXDOMAIN")
        return _Reply("NOERROR", (cluster_ip,) if q.qtype == "A" and is_ipv4(cluster_ip) else ())

    def _endpoint_addresses(self, service: dict[str, Any]) -> list[tuple[str, str]]:
        """(ip, hostname) of the ready addresses published for a Service."""
        meta = service["metadata"]
        endpoints = self.twin.store.peek("Endpoints", meta.get("namespace", ""), meta["name"])
        out: list[tuple[str, str]] = []
        for subset in (endpoints or {}).get("subsets") or []:
            for address in subset.get("addresses") or []:
                ip = address.get("ip")
                if ip and all(ip != seen for seen, _ in out):
                    out.append((ip, str(address.get("hostname") or "")))
        return out

    def _reverse(self, qname: str) -> _Reply | None:
        labels = qname.rstrip(".").split(".")
        if len(labels) != 6 or labels[-2:] != ["in-addr", "arpa"]:
            return _Reply("NXDOMAIN")
        ip = ".".join(reversed(labels[:4]))
        if self._services_by_ip is None:
            self._services_by_ip = {}
            self._endpoint_names_by_ip = {}
            for service in self.twin.store.scan("Service"):
                meta = service["metadata"]
                base = f"{meta['name']}.{meta.get('namespace', '')}.svc.{CLUSTER_DOMAIN}"
                cluster_ip = (service.get("spec") or {}).get("clusterIP")
                if cluster_ip and cluster_ip != "None":
                    self._services_by_ip.setdefault(cluster_ip, service)
                elif cluster_ip == "None":
                    for address_ip, hostname in self._endpoint_addresses(service):
                        label = hostname or address_ip.replace(".", "-")
                        self._endpoint_names_by_ip.setdefault(address_ip, f"{label}.{base}")
        service = self._services_by_ip.get(ip)
        if service is not None:
            meta = service["metadata"]
            return _Reply("NOERROR", names=(f"{meta['name']}.{meta.get('namespace', '')}.svc.{CLUSTER_DOMAIN}",))
        name = (self._endpoint_names_by_ip or {}).get(ip)
        if name:
            return _Reply("NOERROR", names=(name,))
        return _Reply("NXDOMAIN")

    # ------------------------------------------------------------- forward
    def _p_forward(self, d: Directive, q: _Lookup, depth: int) -> _Reply | None:
        origin = d.args[0]
        origin_zone = "." if origin == "." else origin.lower().rstrip(".") + "."
        if not in_zone(q.qname, origin_zone):
            return None
        targets = [t.split("://", 1)[-1].rsplit(":", 1)[0] if t.count(":") == 1 or "://" in t else t
                   for t in d.args[1:]]
        for target in targets:
            if target == "/etc/resolv.conf" or target in PUBLIC_RESOLVERS:
                reply = upstream_query(q.qname, q.qtype)
                return reply
        return _Reply("SERVFAIL")  # no healthy upstream


def _rewrite(qname: str, kind: str, src: str, dst: str) -> str | None:
    name = qname.rstrip(".")
    src_n = src.rstrip(".") if kind != "regex" else src
    dst_n = dst.rstrip(".")
    if kind == "exact":
        return dst_n + "." if name == src_n.lower() else None
    if kind == "prefix":
        return dst_n + name[len(src_n):] + "." if name.startswith(src_n.lower()) else None
    if kind == "suffix":
        return name[: len(name) - len(src_n)] + dst_n + "." if name.endswith(src_n.lower()) else None
    if kind == "substring":
        return name.replace(src_n.lower(), dst_n, 1) + "." if src_n.lower() in name else None
    m = re.search(_go_regex(src), qname) or re.search(_go_regex(src), name)
    if m is None:
        return None
    out = dst
    for index, group in enumerate(m.groups(), start=1):
        out = out.replace("{" + str(index) + "}", group or "")
    return out.rstrip(".") + "."


def _render(template: str, q: _Lookup, m: re.Match[str]) -> str:
    groups = {str(i): g or "" for i, g in enumerate([m.group(0), *m.groups()])}
    groups.update({k: v or "" for k, v in m.groupdict().items()})

    def value(expr: str) -> str:
        expr = expr.strip()
        if expr == ".Name":
            return q.qname
        if expr == ".Zone":
            return q.zone
        if expr in (".Type",):
            return q.qtype
        if expr == ".Class":
            return "IN"
        g = re.fullmatch(r'\.Group\.(\w+)|index \.Group "(\w+)"', expr)
        if g:
            return groups.get(g.group(1) or g.group(2), "")
        return ""

    return re.sub(r"\{\{(.*?)\}\}", lambda mm: value(mm.group(1)), template)


def upstream_query(qname: str, qtype: str) -> _Reply:
    """What the world outside the cluster answers: the fixed table, NXDOMAIN for the rest."""
    ips = EXTERNAL_HOSTS.get(qname.rstrip(".").lower())
    if ips is None:
        return _Reply("NXDOMAIN", authoritative=False)
    return _Reply("NOERROR", ips if qtype == "A" else (), authoritative=False)


# ==================================================================================== per-twin state
@dataclass
class _State:
    cache_key: tuple[float, int] = (-1.0, -1)
    answers: dict[tuple[Any, ...], DnsAnswer] = field(default_factory=dict)
    corefile_rv: str | None = None
    corefile: Corefile | None = None  # the last Corefile that parsed (what CoreDNS runs)
    coredns: CoreDNS | None = None
    service_by_ip: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    reach: dict[tuple[str, str], bool] = field(default_factory=dict)


def _state(twin: Twin) -> _State:
    state = twin.services.dns
    if state is None:
        state = _State()
        twin.services.dns = state
    key = (float(twin.clock.now), int(twin.store.resource_version))
    if state.cache_key != key:
        state.cache_key = key
        state.answers.clear()
        state.service_by_ip.clear()
        state.reach.clear()
        state.coredns = None
    return state


def coredns_for(twin: Twin) -> CoreDNS:
    """The CoreDNS model for the current Corefile (the last one that parsed)."""
    from sregym.twin.topology import COREFILE

    state = _state(twin)
    if state.coredns is not None:
        return state.coredns
    cm = twin.store.peek("ConfigMap", "kube-system", "coredns")
    rv = str(get_path(cm, "metadata", "resourceVersion", default="")) if cm else ""
    if state.corefile is None or rv != state.corefile_rv:
        text = (cm or {}).get("data", {}).get("Corefile") if cm else None
        try:
            state.corefile = parse_corefile(text if text is not None else "")
        except CorefileError:
            if state.corefile is None:
                state.corefile = parse_corefile(COREFILE) if text is None else Corefile([])
        state.corefile_rv = rv
    state.coredns = CoreDNS(twin, state.corefile)
    return state.coredns


def _dns_service(twin: Twin, state: _State, ip: str) -> dict[str, Any] | None:
    """The Service whose ClusterIP is `ip` (the cluster DNS is just a Service)."""
    if ip not in state.service_by_ip:
        found = None
        if ip == CLUSTER_DNS_IP:
            found = twin.store.peek("Service", "kube-system", "kube-dns")
            if found is not None and get_path(found, "spec", "clusterIP") != ip:
                found = None
        if found is None:
            for service in twin.store.scan("Service"):
                if get_path(service, "spec", "clusterIP") == ip:
                    found = service
                    break
        state.service_by_ip[ip] = found
    return state.service_by_ip[ip]


def _reachable_dns(twin: Twin, state: _State, pod: dict[str, Any] | None, src_ip: str,
                   server_ip: str) -> bool | None:
    """Whether the pod gets an answer from a cluster nameserver: None when `server_ip` is not a
    cluster Service; False when no serving backend is reachable (the query times out)."""
    service = _dns_service(twin, state, server_ip)
    if service is None:
        return None
    src_uid = str(get_path(pod, "metadata", "uid", default="")) if pod else ""
    key = (src_uid + "|" + src_ip, server_ip)
    if key in state.reach:
        return state.reach[key]
    from sregym.twin.controllers.endpoints import ready_backends
    from sregym.twin.dataplane.netpolicy import allowed

    runtime = twin.services.runtime
    chaos = twin.services.chaos
    routes = bgp_routes_of(twin)
    src_node = str(get_path(pod, "spec", "nodeName", default="") or "") if pod else ""
    ok = False
    for backend in ready_backends(twin, service):
        if src_node and backend.pod is not None and not get_path(backend.pod, "spec", "hostNetwork") and \
                not routes.reachable(src_node, str(get_path(backend.pod, "spec", "nodeName", default="") or "")):
            continue  # no BGP route to that CoreDNS pod's node: the query is dropped
        if runtime is not None and hasattr(runtime, "listener") and \
                runtime.listener(backend.ip, 53, "UDP") is None and runtime.listener(backend.ip, 53, "TCP") is None:
            continue
        if not allowed(twin, pod, src_ip, backend.pod, 53, "UDP"):
            continue
        if chaos is not None and pod is not None and hasattr(chaos, "network"):
            effect = chaos.network(pod, backend.pod)
            if effect is not None and (getattr(effect, "partition", False) or getattr(effect, "loss", 0) >= 1.0):
                continue
        ok = True
        break
    state.reach[key] = ok
    return ok


def _is_coredns_pod_ip(twin: Twin, ip: str) -> bool:
    for pod in twin.store.scan("Pod", "kube-system"):
        if get_path(pod, "status", "podIP") == ip and \
                get_path(pod, "metadata", "labels", "k8s-app") == "kube-dns":
            return True
    return False


def _chaos_reply(twin: Twin, pod: dict[str, Any] | None, fqdn: str) -> _Reply | None:
    chaos = twin.services.chaos
    if chaos is None or pod is None or not hasattr(chaos, "dns"):
        return None
    action = chaos.dns(pod, fqdn.rstrip("."))
    if action == "error":
        return _Reply("SERVFAIL")
    if action == "random":
        rng = twin.rng.stream("dns.chaos")
        return _Reply("NOERROR", (".".join(str(rng.randint(1, 254)) for _ in range(4)),))
    return None


# ========================================================================================= lookups
def resolve_name(twin: Twin, pod: dict[str, Any] | None, name: str, *, record: str = "A",
                 namespace: str = "default", resolv_conf: str | None = None,
                 hosts: str | None = None, use_hosts: bool = True,
                 search: bool = True, server: str | None = None) -> DnsAnswer:
    """Resolve `name` from `pod`'s point of view (see the module docstring).

    `pod=None` resolves like a ClusterFirst pod in `namespace` (the in-cluster load generator).
    `resolv_conf`/`hosts` override the kubelet-written files (an exec session passes the files
    the container really has). `use_hosts=False` skips /etc/hosts (nslookup and dig never read
    it); `search=False` asks the name as absolute (dig); `server` asks one nameserver directly
    (`nslookup geo 10.96.0.10`). `record` is "A", "AAAA", "PTR" (name = an IPv4 address) or
    "CNAME"."""
    record = record.upper()
    state = _state(twin)
    pod_key: tuple[Any, ...] = ("", namespace)
    if pod is not None:
        spec = pod.get("spec") or {}
        pod_key = (get_path(pod, "metadata", "uid", default=""),
                   get_path(pod, "metadata", "resourceVersion", default=""),
                   get_path(pod, "metadata", "namespace", default=""), spec.get("dnsPolicy"),
                   repr(spec.get("dnsConfig")), spec.get("hostNetwork"), repr(spec.get("hostAliases")))
    key = (pod_key, name, record, resolv_conf, hosts, use_hosts, search, server)
    cached = state.answers.get(key)
    if cached is not None:
        return cached
    answer = _resolve(twin, state, pod, name, record, namespace, resolv_conf, hosts, use_hosts,
                      search, server)
    if len(state.answers) > 50_000:
        state.answers.clear()
    state.answers[key] = answer
    return answer


def _resolve(twin: Twin, state: _State, pod: dict[str, Any] | None, name: str, record: str,
             namespace: str, resolv_text: str | None, hosts_text: str | None, use_hosts: bool,
             search: bool, server: str | None) -> DnsAnswer:
    config = parse_resolv_conf(resolv_text) if resolv_text is not None else pod_resolver(pod, namespace)
    if server:
        config = ResolverConfig((server,), config.search, config.ndots, config.timeout, config.attempts)
    src_ip = _source_ip(pod)
    first_server = config.nameservers[0]
    name = name.strip()
    if not name:
        return DnsAnswer(False, (), "NXDOMAIN", "", "no such host", server=first_server)
    if record == "PTR":
        if not is_ipv4(name):
            return DnsAnswer(False, (), "NXDOMAIN", name, f"lookup {name}: unrecognized address",
                             server=first_server)
        qname = ".".join(reversed(name.split("."))) + ".in-addr.arpa."
        return _ask_all(twin, state, pod, src_ip, config, name, [qname], "PTR")
    if is_ipv4(name):
        return DnsAnswer(True, (name,) if record == "A" else (), None, name, "", server="")
    if use_hosts and record == "A" and not server:
        if hosts_text is None and pod is not None:
            from sregym.twin.userland.fs import hosts_file

            hosts_text = hosts_file(twin, pod)
        found = hosts_lookup(hosts_text or "", name)
        if found:
            return DnsAnswer(True, found, None, name.rstrip("."), "", server="", latency_ms=0.0)
    candidates = candidate_names(name, config, search=search)
    return _ask_all(twin, state, pod, src_ip, config, name, candidates, record)


def _ask_all(twin: Twin, state: _State, pod: dict[str, Any] | None, src_ip: str,
             config: ResolverConfig, name: str, candidates: list[str], record: str) -> DnsAnswer:
    latency = 0.0
    worst: str | None = None
    used_server = config.nameservers[0]
    for fqdn in candidates:
        reply: _Reply = _TIMEOUT
        for nameserver in config.nameservers:
            reply = _ask_server(twin, state, pod, src_ip, nameserver, fqdn, record)
            if reply.rcode == "timeout":
                latency += config.timeout * 1000 * config.attempts
                continue
            used_server = nameserver
            latency += 0.4 + 0.1 * len(candidates)
            break
        if reply.rcode == "NOERROR":
            return DnsAnswer(True, reply.ips, None, fqdn.rstrip("."), "", reply.cname, used_server,
                             round(latency, 3), reply.authoritative, reply.names,
                             tuple(c.rstrip(".") for c in candidates))
        if worst is None or _SEVERITY[reply.rcode] > _SEVERITY[worst]:
            worst = reply.rcode
    error = worst or "NXDOMAIN"
    server = config.nameservers[0] if error == "timeout" else used_server
    return DnsAnswer(False, (), error, candidates[-1].rstrip(".") if candidates else name,
                     go_lookup_message(name, server, error, src_ip, twin), None, server,
                     round(latency, 3), True, (), tuple(c.rstrip(".") for c in candidates))


def _ask_server(twin: Twin, state: _State, pod: dict[str, Any] | None, src_ip: str,
                nameserver: str, fqdn: str, record: str) -> _Reply:
    reach = _reachable_dns(twin, state, pod, src_ip, nameserver)
    if reach is None:
        if _is_coredns_pod_ip(twin, nameserver):
            reach = True
        elif nameserver in PUBLIC_RESOLVERS:
            return upstream_query(fqdn, record)
        else:
            return _TIMEOUT
    if not reach:
        return _TIMEOUT
    chaos = _chaos_reply(twin, pod, fqdn)
    if chaos is not None:
        return chaos
    return coredns_for(twin).query(fqdn, record)


def _source_ip(pod: dict[str, Any] | None) -> str:
    if pod is None:
        return ""
    return str(get_path(pod, "status", "podIP", default="") or "")


def go_lookup_message(name: str, server: str, error: str, src_ip: str = "", twin: Twin | None = None) -> str:
    """The error text of Go's resolver (what Go services log after `dial tcp: `)."""
    where = f"lookup {name.rstrip('.')} on {server}:53"
    if error == "timeout":
        port = 32768 + zlib.crc32(f"{src_ip}|{name}".encode()) % 28000
        src = src_ip or "10.244.0.1"
        return f"{where}: read udp {src}:{port}->{server}:53: i/o timeout"
    if error in ("SERVFAIL", "REFUSED"):
        return f"{where}: server misbehaving"
    return f"{where}: no such host"


def reverse_name(twin: Twin, pod: dict[str, Any] | None, ip: str) -> str | None:
    """The PTR name of an address from the pod's view (for ping/nslookup of an IP), or None."""
    answer = resolve_name(twin, pod, ip, record="PTR")
    return answer.names[0] if answer.ok and answer.names else None


__all__ = [
    "CLUSTER_DNS_IP", "EXTERNAL_HOSTS", "CoreDNS", "Corefile", "CorefileError", "DnsAnswer",
    "ResolverConfig", "candidate_names", "coredns_for", "corefile_errors", "go_lookup_message",
    "parse_corefile", "parse_resolv_conf", "pod_resolver", "resolve_name", "reverse_name",
    "upstream_query",
]
