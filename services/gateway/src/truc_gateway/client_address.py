"""The client's address: who a request comes from, as the services' per-address
limits (the lobby's guest sign-ins) and the gateway's own stream limit count it.

It is the HTTP peer's IP address, unless the peer is a trusted proxy
(``TRUC_GATEWAY_TRUSTED_PROXIES``, CIDRs, none by default): then it is the
rightmost ``X-Forwarded-For`` entry that is not itself a trusted proxy — the
address the outermost trusted proxy saw. Entries further left were written by
the client (anyone can send ``X-Forwarded-For``) and are never believed; when
every entry is a trusted proxy, the leftmost is the client; an entry that is
not an address (a proxy's ``unknown``, an obfuscated name) stops the walk at
the trusted hop that wrote it. ``X-Forwarded-For`` from a peer that is not
trusted is ignored. Addresses are written normalized (``::ffff:1.2.3.4`` is
``1.2.3.4``; a port or brackets a proxy added are dropped).

The gateway's own per-address limit (streams) counts an IPv6 client by its
/64 (:func:`truc_service.addresses.counted_as`). Every call the gateway makes carries the address as
the metadata :data:`CLIENT_ADDRESS`;
a client's own ``x-truc-client-address`` header is never passed on (the
gateway forwards no header but ``Authorization``). The services believe that
metadata only from their trusted peers (the lobby's ``TRUC_LOBBY_TRUSTED_PEERS``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from aiohttp import web

from truc_service.addresses import CLIENT_ADDRESS, IPAddress, IPNetwork, parse_address

__all__ = ["CLIENT_ADDRESS", "UNKNOWN", "ClientAddresses"]

UNKNOWN: Final = "unknown"
"""The address of a peer that has none (a Unix socket)."""


class ClientAddresses:
    """Reads the client's address of a request, trusting the given proxies."""

    def __init__(self, trusted_proxies: Iterable[IPNetwork]) -> None:
        self._trusted = tuple(trusted_proxies)

    def trusted(self, address: IPAddress) -> bool:
        return any(address in network for network in self._trusted)

    def of(self, request: web.Request) -> str:
        """The client's address of ``request`` (see the module)."""
        peer = parse_address(request.remote or "")
        if peer is None:
            return UNKNOWN
        if not self._trusted or not self.trusted(peer):
            return str(peer)
        client = peer
        for header in reversed(request.headers.getall("X-Forwarded-For", ())):
            for entry in reversed(header.split(",")):
                hop = parse_address(entry)
                if hop is None:  # not an address: the trusted hop that wrote it is the client
                    return str(client)
                client = hop
                if not self.trusted(hop):
                    return str(client)
        return str(client)
