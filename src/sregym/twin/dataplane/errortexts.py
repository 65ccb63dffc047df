"""The error texts a calling program gets for a failed call, by client kind (gRPC, HTTP, Thrift,
MongoDB, memcached), and which failures its retry policy retries: shared by the fluid outcomes and the
exemplar traces so both say the same thing."""

from __future__ import annotations

from sregym.twin.dataplane.connect import ConnectResult
from sregym.twin.dataplane.programs import DependencyConfig
from sregym.twin.dataplane.spec import Call
from sregym.twin.dataplane.state import OpResult


def retryable(dep: DependencyConfig, cls: str) -> bool:
    """Whether the caller's policy retries this class of failure (DNS errors surface as
    Unavailable in gRPC and are retried like it)."""
    if cls in ("nxdomain", "servfail", "no_route", "unreachable"):
        cls = "unavailable"
    return cls in dep.retry_on


def client_error(dep: DependencyConfig, call: Call, res: ConnectResult) -> str:
    """The error text the calling program gets for a failed connection."""
    if dep.kind == "thrift":
        return thrift_connect_error(dep, res)
    if dep.kind == "grpc":
        if res.error == "timeout" and res.stage != "dns":
            return "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
        return f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: ' \
               f'{res.message}"'
    if dep.kind == "http" and dep.client == "awc":
        return awc_connect_error(res)
    if dep.kind == "http":
        url = f"http://{dep.host}:{dep.port}{dep.path}"
        if res.error == "timeout" and res.stage != "dns":
            return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        return f'Get "{url}": {res.message}'
    if dep.kind == "mongodb":
        if res.error in ("nxdomain", "servfail"):
            return f"no reachable servers ({res.message})"
        return f"server selection error: server selection timeout, current topology: {{ Type: Unknown, Servers: " \
               f"[{{ Addr: {dep.host}:{dep.port}, Type: Unknown, Last error: {res.message} }}, ] }}"
    if dep.kind == "memcached":
        return "memcache: no servers configured or available" if res.error in ("nxdomain", "servfail") \
            else res.message
    if dep.kind == "kafka":  # sarama (IBM/sarama >= 1.40) wraps the last dial error
        return f"kafka: client has run out of available brokers to talk to: {res.message}"
    return res.message


def awc_connect_error(res: ConnectResult) -> str:
    """actix-web's awc 3 (`SendRequestError`'s Display): its 5 s request timeout fires before the
    connector's own 5 s connect timeout; a dial error is the connector's, a lookup error its resolver's."""
    if res.error == "timeout" and res.stage != "dns":
        return "Timeout while waiting for response"
    if res.error in ("nxdomain", "servfail"):
        return "Failed to connect to host: Failed resolving hostname: failed to lookup address information: " \
               "Name or service not known"
    if res.error == "refused":
        return "Failed to connect to host: Connection refused (os error 111)"
    if res.error == "reset":
        return "Failed to connect to host: Connection reset by peer (os error 104)"
    if res.error in ("no_route", "unreachable"):
        return "Failed to connect to host: No route to host (os error 113)"
    return f"Failed to connect to host: {res.message}"


def thrift_connect_error(dep: DependencyConfig, res: ConnectResult) -> str:
    """Apache Thrift C++ (TSocket): what `open()` throws, as the services log it."""
    where = f"<Host: {dep.host} Port: {dep.port}>"
    if res.error in ("nxdomain", "servfail"):
        return f"TTransportException: Could not resolve host for client socket. {where}"
    if res.error == "timeout" and res.stage != "dns":
        return f"TTransportException: TSocket::open() connect() {where}: Connection timed out"
    if res.error == "refused":
        return f"TTransportException: TSocket::open() connect() {where}: Connection refused"
    return f"TTransportException: TSocket::open() connect() {where}: {res.message}"


def deadline_error(dep: DependencyConfig, call: Call) -> str:
    if dep.kind == "http" and dep.client == "envoy":  # the router's local reply to its downstream
        return "upstream request timeout"
    if dep.kind == "http" and dep.client == "awc":
        return "Timeout while waiting for response"
    if dep.kind == "thrift":  # TSocket's receive timeout
        return "TTransportException: THRIFT_EAGAIN (timed out)"
    if dep.kind == "grpc":
        return "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    url = f"http://{dep.host}:{dep.port}{dep.path}"
    return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'


def unimplemented_error(dep: DependencyConfig, call: Call) -> str:
    if dep.kind == "thrift":
        return f"TApplicationException: Invalid method name: '{call.operation}'"
    if dep.kind == "grpc":
        service, _, method = call.operation.strip("/").partition("/")
        return f"rpc error: code = Unimplemented desc = unknown method {method} for service {service}"
    return f"unexpected status 404 from http://{dep.host}:{dep.port}{_route(call.operation)}"


def propagated_error(dep: DependencyConfig, call: Call, res: OpResult) -> str:
    if dep.kind == "thrift":  # the callee's handler threw ServiceException
        return res.error if res.error.startswith("ServiceException") else \
            f"ServiceException: {res.error or 'internal error'}"
    if dep.kind == "grpc":
        if res.error.startswith("rpc error:"):
            return res.error
        return f"rpc error: code = Unknown desc = {res.error or 'internal error'}"
    return f"unexpected status 500 from http://{dep.host}:{dep.port}{_route(call.operation)}: {res.error}"


def _route(operation: str) -> str:
    """The path of an HTTP call's operation ("POST /get-quote" -> "/get-quote")."""
    return operation.partition(" ")[2] if " " in operation else operation


def store_timeout_error(dep: DependencyConfig) -> str:
    if dep.kind == "mongodb":
        return "context deadline exceeded"
    return f"memcache: connect timeout to {dep.host}:{dep.port}" if dep.kind == "memcached" else "i/o timeout"
