"""
A small httpx-compatible client for ToolStore toolsets. Every request goes through the host:
only the toolset's allowed hosts are reachable, and secrets are put in by the host at egress.

    import httpx
    resp = httpx.get("https://api.example.com/data", params={"q": "Oslo"}, timeout=10)
    resp.raise_for_status()
    return resp.json()
"""

import json as _json
from urllib.parse import urlencode, urlsplit, urlunsplit

import _toolstore_host

__all__ = [
    "Client",
    "ConnectError",
    "HTTPError",
    "HTTPStatusError",
    "Headers",
    "Request",
    "RequestError",
    "Response",
    "TimeoutException",
    "delete",
    "get",
    "head",
    "options",
    "patch",
    "post",
    "put",
    "request",
]


class HTTPError(Exception):
    pass


class RequestError(HTTPError):
    # The host's code for a request it refused or that failed there: "permission_denied" (a host
    # the toolset does not allow), "timeout", "fetch_failed", ...
    error = None

    def __init__(self, message, *, request=None):
        super().__init__(message)
        self.request = request


class ConnectError(RequestError):
    pass


class TimeoutException(RequestError):
    pass


class HTTPStatusError(HTTPError):
    def __init__(self, message, *, request, response):
        super().__init__(message)
        self.request = request
        self.response = response


class Headers(dict):
    """Case-insensitive header mapping (keys are stored lower-case)."""

    def __init__(self, items=None):
        super().__init__()
        for k, v in dict(items or {}).items():
            self[k] = v

    def __setitem__(self, key, value):
        super().__setitem__(str(key).lower(), str(value))

    def __getitem__(self, key):
        return super().__getitem__(str(key).lower())

    def __contains__(self, key):
        return super().__contains__(str(key).lower())

    def get(self, key, default=None):
        return super().get(str(key).lower(), default)


class Request:
    def __init__(self, method, url, headers):
        self.method = method
        self.url = url
        self.headers = headers

    def __repr__(self):
        return f"<Request({self.method!r}, {self.url!r})>"


_REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable"}


class Response:
    def __init__(self, status_code, headers, text, url, request, reason_phrase=""):
        self.status_code = status_code
        self.headers = Headers(headers)
        self.text = text
        self.url = url
        self.request = request
        self.reason_phrase = reason_phrase or _REASONS.get(status_code, "")

    @property
    def content(self):
        return self.text.encode("utf-8")

    @property
    def is_success(self):
        return 200 <= self.status_code < 300

    @property
    def is_error(self):
        return self.status_code >= 400

    def json(self, **kwargs):
        return _json.loads(self.text, **kwargs)

    def raise_for_status(self):
        if self.status_code >= 400:
            kind = "Client error" if self.status_code < 500 else "Server error"
            raise HTTPStatusError(
                f"{kind} '{self.status_code} {self.reason_phrase}' for url '{self.url}'",
                request=self.request,
                response=self,
            )
        return self

    def __repr__(self):
        return f"<Response [{self.status_code} {self.reason_phrase}]>"


def _merge_params(url, params):
    if not params:
        return url
    parts = urlsplit(url)
    pairs = []
    for k, v in (params.items() if hasattr(params, "items") else params):
        if isinstance(v, (list, tuple)):
            pairs.extend((k, _scalar(x)) for x in v)
        elif v is not None:
            pairs.append((k, _scalar(v)))
    query = urlencode(pairs)
    query = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _scalar(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def _timeout_ms(timeout):
    if timeout is None:
        return None
    if hasattr(timeout, "read"):
        timeout = timeout.read
    return int(float(timeout) * 1000)


def request(method, url, *, params=None, json=None, data=None, content=None, headers=None,
            timeout=None, follow_redirects=True, cookies=None, auth=None):
    method = str(method).upper()
    url = _merge_params(str(url), params)
    hdrs = Headers(headers)
    body = None
    if json is not None:
        body = _json.dumps(json)
        if "content-type" not in hdrs:
            hdrs["content-type"] = "application/json"
    elif data is not None:
        if isinstance(data, dict):
            body = urlencode(data, doseq=True)
            if "content-type" not in hdrs:
                hdrs["content-type"] = "application/x-www-form-urlencoded"
        else:
            body = data.decode("utf-8") if isinstance(data, bytes) else str(data)
    elif content is not None:
        body = content.decode("utf-8") if isinstance(content, bytes) else str(content)
    if auth is not None:
        import base64
        user, password = auth
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        hdrs["authorization"] = f"Basic {token}"
    req = Request(method, url, hdrs)
    payload = {"url": url, "method": method, "headers": dict(hdrs)}
    if body is not None:
        payload["body"] = body
    ms = _timeout_ms(timeout)
    if ms is not None:
        payload["timeoutMs"] = ms
    answer = _json.loads(_toolstore_host.fetch(_json.dumps(payload)))
    if not answer.get("ok"):
        error = answer.get("error") or {}
        message = error.get("message", "request failed")
        failure = (TimeoutException if error.get("error") == "timeout" else ConnectError)(message, request=req)
        # The host's code, as a TypeScript toolset sees it in e.error (permission_denied, ...).
        failure.error = error.get("error")
        raise failure
    r = answer["response"]
    return Response(r["status"], r.get("headers") or {}, r.get("body", ""), r.get("url", url), req,
                    r.get("statusText", ""))


def get(url, **kwargs):
    return request("GET", url, **kwargs)


def post(url, **kwargs):
    return request("POST", url, **kwargs)


def put(url, **kwargs):
    return request("PUT", url, **kwargs)


def patch(url, **kwargs):
    return request("PATCH", url, **kwargs)


def delete(url, **kwargs):
    return request("DELETE", url, **kwargs)


def head(url, **kwargs):
    return request("HEAD", url, **kwargs)


def options(url, **kwargs):
    return request("OPTIONS", url, **kwargs)


class Client:
    """`with httpx.Client(base_url=..., headers=...) as client: client.get("/path")`."""

    def __init__(self, *, base_url="", headers=None, params=None, timeout=None, **_ignored):
        self.base_url = str(base_url).rstrip("/")
        self.headers = Headers(headers)
        self.params = dict(params or {})
        self.timeout = timeout

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        pass

    def request(self, method, url, *, params=None, headers=None, timeout=None, **kwargs):
        full = url if "://" in str(url) else f"{self.base_url}/{str(url).lstrip('/')}"
        merged = Headers(self.headers)
        for k, v in dict(headers or {}).items():
            merged[k] = v
        all_params = {**self.params, **dict(params or {})}
        return request(method, full, params=all_params, headers=merged,
                       timeout=self.timeout if timeout is None else timeout, **kwargs)

    def get(self, url, **kwargs):
        return self.request("GET", url, **kwargs)

    def post(self, url, **kwargs):
        return self.request("POST", url, **kwargs)

    def put(self, url, **kwargs):
        return self.request("PUT", url, **kwargs)

    def patch(self, url, **kwargs):
        return self.request("PATCH", url, **kwargs)

    def delete(self, url, **kwargs):
        return self.request("DELETE", url, **kwargs)
