"""Small checks the launchers use: free and busy TCP ports, and whether a web server answers."""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request


def free_port(host: str) -> int:
    """A TCP port nothing listens on now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """Whether a server could not listen on ``host:port`` now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def http_status(url: str, *, host: str | None = None, timeout: float = 2.0) -> int | None:
    """The HTTP status of a GET (with this ``Host`` header, if given); None when nothing
    answers."""
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return None


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (gunicorn's ``--bind unix:PATH``)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def unix_http_status(
    socket_path: str, path: str, *, host: str = "localhost", timeout: float = 2.0
) -> int | None:
    """The HTTP status of a GET of ``path`` through a Unix socket; None when nothing answers."""
    connection = _UnixHTTPConnection(socket_path, timeout)
    try:
        connection.request("GET", path, headers={"Host": host})
        return int(connection.getresponse().status)
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def http_ok(url: str) -> bool:
    """Whether a GET of ``url`` answers 200."""
    return http_status(url) == 200
