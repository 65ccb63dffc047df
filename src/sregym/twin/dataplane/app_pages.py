"""What stock servers answer that the data plane's generic model does not know: nginx's own
pages and a gRPC server's reply to HTTP/1.1.

- nginx (the official image's default site) serves its welcome page for `/` and `/index.html`
  and its own HTML error page for anything else, with `Server: nginx/1.27.4`;
- a grpc-go server writes its HTTP/2 SETTINGS frame as soon as a connection opens and then
  closes on a client that does not send the HTTP/2 preface, so `curl` reads binary bytes where a
  status line should be and reports "Received HTTP/0.9 when not allowed" (exit 1).
"""

from __future__ import annotations

NGINX_VERSION = "nginx/1.27.4"
GRPC_ERROR = "http09"

WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""

_REASONS = {404: "Not Found", 403: "Forbidden", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Temporarily Unavailable", 504: "Gateway Time-out"}


def nginx_error_page(status: int) -> str:
    title = f"{status} {_REASONS.get(status, 'Error')}"
    return (f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
            f"<hr><center>{NGINX_VERSION}</center>\r\n</body>\r\n</html>\r\n")


def is_nginx(image: str) -> bool:
    name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    return name in ("nginx", "nginx-unprivileged")


def nginx_answer(path: str, served: bool, date: str) -> tuple[int, str, dict[str, str]]:
    """(status, body, headers) of the stock nginx for one GET."""
    if served and path in ("/", "/index.html"):
        body, status = WELCOME, 200
        headers = {"Server": NGINX_VERSION, "Date": date, "Content-Type": "text/html",
                   "Last-Modified": "Wed, 05 Feb 2025 11:06:32 GMT", "Connection": "keep-alive",
                   "ETag": '"67a34638-267"', "Accept-Ranges": "bytes"}
    else:
        status = 200 if served else 404
        body = "OK\n" if served else nginx_error_page(404)
        headers = {"Server": NGINX_VERSION, "Date": date, "Content-Type": "text/html" if not served
                   else "text/plain", "Connection": "keep-alive"}
    return status, body, headers




# Hotel Reservation's frontend checks its query parameters before calling any backend, in this
# order, and answers a missing one with Go's `http.Error` (400, text/plain, message + newline).
_HR_FRONTEND_CHECKS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "/hotels": ((("inDate", "outDate"), "Please specify inDate/outDate params"),
                (("lat", "lon"), "Please specify location params")),
    "/recommendations": ((("lat", "lon"), "Please specify location params"),
                         (("require",), "Please specify require params")),
    "/user": ((("username", "password"), "Please specify username and password"),),
    "/reservation": ((("inDate", "outDate"), "Please specify inDate/outDate params"),
                     (("hotelId",), "Please specify hotelId params"),
                     (("customerName",), "Please specify customerName params"),
                     (("username", "password"), "Please specify username and password")),
}


def hr_frontend_error(service: str, path: str, query: str) -> str | None:
    """The frontend's 400 message for a request missing a required parameter, else None."""
    if service != "frontend" or path not in _HR_FRONTEND_CHECKS:
        return None
    from urllib.parse import parse_qs

    params = {k: v[0] for k, v in parse_qs(query).items() if v and v[0]}
    for names, message in _HR_FRONTEND_CHECKS[path]:
        if any(not params.get(name) for name in names):
            return message
        if path == "/recommendations" and names == ("require",) and params["require"] not in ("dis", "rate", "price"):
            return message
    return None


def hr_frontend_body(path: str) -> str:
    """What the frontend encodes on success (`json.NewEncoder(w).Encode`: keys sorted, newline)."""
    if path == "/user":
        return '{"message":"Login successfully!"}\n'
    if path == "/reservation":
        return '{"message":"Reserve successfully!"}\n'
    return ('{"features":[{"geometry":{"coordinates":[-122.4112,37.7867],"type":"Point"},"id":"1",'
            '"properties":{"name":"Clift Hotel","phone_number":"(415) 775-4700"},"type":"Feature"}],'
            '"type":"FeatureCollection"}\n')


__all__ = ["GRPC_ERROR", "WELCOME", "hr_frontend_body", "hr_frontend_error", "is_nginx", "nginx_answer",
           "nginx_error_page"]
