"""Which network addresses the ledger sends to: the alerts webhook is a URL from a settings file, and a URL that named
a cloud's metadata service (169.254.169.254) or a machine of the private network would turn the nightly into a way in.

Loopback is allowed (a receiver on the same machine); link-local, metadata, unspecified, multicast and reserved
addresses never; private and other non-global ranges only with ``[alerts] allow_private = true``. An address is read
in every spelling a resolver reads: IPv6, IPv4-mapped IPv6 (``::ffff:169.254.169.254``), NAT64 (``64:ff9b::a9fe:a9fe``)
and the legacy IPv4 forms ``inet_aton`` takes (hexadecimal ``0xa9fea9fe``, decimal ``2852039166``, octal
``0251.0376.0251.0376``, short ``169.254.43518``)."""

from __future__ import annotations

import ipaddress
import socket

#: the cloud metadata services that answer outside the link-local range (AWS's IPv6 one, Alibaba's)
METADATA = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` spells, in any of the forms above, or None for a name."""
    text = host.strip().strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(text))
        except (OSError, ValueError):
            return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def address_refused(host: str, allow_private: bool) -> str | None:
    """Why the ledger does not send to ``host`` (an address in any spelling), or None when it may (and for a name:
    names are checked by what they resolve to, when sending)."""
    ip = ip_literal(host)
    if ip is None or ip.is_loopback:
        return None
    if ip in METADATA:
        return "a cloud metadata service's address"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global and not allow_private:
        return "a private address (set [alerts] allow_private = true for a receiver on your own network)"
    return None
