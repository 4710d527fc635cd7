"""Which requests' forwarded headers are believed: only those a trusted proxy
(``TRUSTED_PROXIES``, addresses and networks) hands over.

Anyone who reaches the web directly could otherwise write ``X-Forwarded-For`` (a fresh address
for every wrong password, so the login throttling never locks them out) or
``X-Forwarded-Proto: https`` (a plain-HTTP request taken for HTTPS). ``ForwardedHeadersMiddleware``
removes those headers from every request whose peer (``REMOTE_ADDR``) is not a trusted proxy,
before anything reads them; ``client_address`` is the address the login throttling keys on.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Headers a proxy writes about the client, in ``request.META`` form (besides the one
#: ``SECURE_PROXY_SSL_HEADER`` names).
FORWARDED_HEADERS = (
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
    "HTTP_X_REAL_IP",
    "HTTP_FORWARDED",
)


@lru_cache(maxsize=8)
def _networks(specs: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(spec, strict=False) for spec in specs)


def _ip(text: str | None) -> IPAddress | None:
    try:
        address = ipaddress.ip_address((text or "").strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # an IPv4 peer of a socket listening on IPv6
    return address


def is_trusted_proxy(address: str | None) -> bool:
    """Whether ``address`` is one of ``TRUSTED_PROXIES``."""
    ip = _ip(address)
    return ip is not None and any(ip in net for net in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_address(request: HttpRequest) -> str | None:
    """The client's address (django-axes' ``AXES_CLIENT_IP_CALLABLE``): ``REMOTE_ADDR``, unless
    that is a trusted proxy; then the address that proxy appended to X-Forwarded-For, and so on
    leftwards while the address reached is a trusted proxy too. Entries left of the first
    untrusted address are that client's to write, so they are never read."""
    address = request.META.get("REMOTE_ADDR")
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    while hops and is_trusted_proxy(address):
        hop = hops.pop()
        if _ip(hop) is None:
            break  # not an address a proxy writes: the proxy's own address stands
        address = hop
    return address


class ForwardedHeadersMiddleware:
    """Drops the forwarded headers of a request that does not come from a trusted proxy;
    first in ``MIDDLEWARE``, so that ``request.is_secure()`` and the rest never see them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_trusted_proxy(request.META.get("REMOTE_ADDR")):
            ssl_header = settings.SECURE_PROXY_SSL_HEADER
            for key in (*FORWARDED_HEADERS, *((ssl_header[0],) if ssl_header else ())):
                request.META.pop(key, None)
        return self.get_response(request)
