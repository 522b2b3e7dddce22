"""The client address of a call: whom the guest sign-in limits count.

It is the gRPC peer's IP (``context.peer()``: ``ipv4:1.2.3.4:5678``,
``ipv6:[::1]:5678``), except that a peer in ``TRUC_LOBBY_TRUSTED_PEERS`` (the
gateway: by default loopback only) may name the address it forwards the call
for in the metadata ``x-truc-client-address``; the same metadata from any
other peer is ignored, so a client cannot choose whom it is counted as. A
forwarded value that is not an IP address is ignored too (the call counts as
the trusted peer's own).

Addresses are counted as :func:`truc_service.addresses.counted_as` says: an IPv4 address as itself,
an IPv6 address by its /64 (the block one subscriber gets, so an attacker
cannot walk through the addresses of their own network), an IPv4 address
mapped into IPv6 as the IPv4 address. A peer that is not an IP (a Unix socket)
counts as ``local``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from truc_service.addresses import (
    CLIENT_ADDRESS,
    IPAddress,
    IPNetwork,
    counted_as,
    parse_address,
)
from truc_service.guard import Context

__all__ = ["ClientAddresses", "peer_ip"]


def peer_ip(peer: str) -> IPAddress | None:
    """The IP of a gRPC peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``,
    ``ipv6:%5B::1%5D:5678``), or None (``unix:...``, anything else)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return parse_address(rest)
    if kind == "ipv6":
        host = rest.replace("%5B", "[").replace("%5D", "]")
        return parse_address(host if host.startswith("[") else host.rpartition(":")[0])
    return None


class ClientAddresses:
    """Tells the client address of a call, trusting ``trusted`` peers' forwarding."""

    def __init__(self, trusted: Iterable[IPNetwork]) -> None:
        self._trusted: Sequence[IPNetwork] = tuple(trusted)

    def trusts(self, address: IPAddress | None) -> bool:
        """Whether ``address`` (a peer's) may name the client address it forwards for."""
        return address is not None and any(
            address.version == network.version and address in network for network in self._trusted
        )

    def of(self, context: Context) -> str:
        """The counted client address of the call (:func:`counted_as`)."""
        peer = peer_ip(context.peer() or "")
        if self.trusts(peer):
            for key, value in context.invocation_metadata() or ():
                if key == CLIENT_ADDRESS and isinstance(value, str):
                    forwarded = parse_address(value)
                    if forwarded is not None:
                        return counted_as(forwarded)
        return counted_as(peer)
