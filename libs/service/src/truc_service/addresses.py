"""Client addresses: whom the per-address limits count, read the same way by every service.

The gateway names the address of the client it forwards a call for in the
metadata :data:`CLIENT_ADDRESS` (``truc_gateway.client_address`` decides it from
the HTTP peer and the trusted proxies' ``X-Forwarded-For``); a service believes
that metadata only from its trusted peers (the lobby's
``TRUC_LOBBY_TRUSTED_PEERS``). Addresses are read normalized
(:func:`parse_address`: a port or brackets dropped, ``::ffff:1.2.3.4`` is
``1.2.3.4``) and counted as :func:`counted_as` says: an IPv4 address as itself,
an IPv6 address by its /64 (the block one subscriber gets, so walking through
one's own addresses gains nothing). :func:`networks` reads the comma lists of
CIDRs the settings name trusted peers and proxies with.
"""

from __future__ import annotations

import ipaddress
from typing import Final

__all__ = [
    "CLIENT_ADDRESS",
    "IPV6_BLOCK",
    "LOCAL",
    "IPAddress",
    "IPNetwork",
    "counted_as",
    "networks",
    "parse_address",
]

CLIENT_ADDRESS: Final = "x-truc-client-address"
"""The gRPC metadata in which the gateway names its client's address."""
IPV6_BLOCK: Final = 64
"""An IPv6 client is counted by its /64."""
LOCAL: Final = "local"
"""What a peer without an IP address (a Unix socket) counts as."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_address(text: str) -> IPAddress | None:
    """An IP address as a peer or a proxy writes it (``1.2.3.4``, ``1.2.3.4:80``,
    ``[::1]:80``, ``::ffff:1.2.3.4``), normalized; None if it is not one."""
    text = text.strip()
    if text.startswith("["):  # [v6] or [v6]:port
        text = text[1 : text.find("]")].partition("%")[0] if "]" in text else ""
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def counted_as(address: IPAddress | None) -> str:
    """The key an address is counted under: IPv4 itself, IPv6 its /64, none :data:`LOCAL`."""
    if address is None:
        return LOCAL
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_BLOCK), strict=False))
    return str(address)


def networks(value: str) -> tuple[IPNetwork, ...]:
    """A comma list of CIDRs (``10.0.0.0/8, fd00::/8``; an address alone is one
    host); ValueError naming the part that is not one."""
    found: list[IPNetwork] = []
    for part in value.split(","):
        if part.strip():
            try:
                found.append(ipaddress.ip_network(part.strip(), strict=False))
            except ValueError:
                raise ValueError(
                    f"must be a comma list of CIDRs ({part.strip()!r} is not one)"
                ) from None
    return tuple(found)
