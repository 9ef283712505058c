"""Refuses webhook targets (and provider base URLs) that point into Herald's own network.

Tenants choose the URLs Herald POSTs to, so without a guard any tenant could make Herald call
its cloud's metadata service, an admin port on a private address or anything else the sender
can reach (server-side request forgery). The rule: only http(s), and every address the host
resolves to must be public unicast, unless the operator allow-listed it.

It is checked twice:
- when a URL is submitted, so the tenant gets a clear refusal: `TargetGuard.check_url` (no
  DNS, cheap enough for any validation path) and `TargetGuard.check_url_resolved` (also
  resolves the name);
- when connecting, through `TargetGuard.transport()`: the name is resolved once, every address
  is checked, and the socket goes to a checked address while TLS (SNI and certificate check)
  and the Host header keep using the name. A name that resolved to a public address when it
  was submitted and resolves to a private one later (DNS rebinding) is refused then, and there
  is no second lookup between the check and the connect for an attacker to answer differently.

Email providers get the same guard: a tenant's provider names where Herald connects with the
tenant's credential (an HTTP base URL, or an SMTP relay's host and port), as tenant-aimed as a
webhook URL, so the same policy and allow-list apply at submit time (`check_host_resolved`, the
gateway) and at connect time (`transport()` for HTTP, `connect_socket` for SMTP, the email-sender).

`addresses.py` classifies addresses and host names and holds the allow-list, `refusals.py` what a
refusal says, `policy.py` the checks (`TargetGuard`), `transport.py` the guarded connections.
"""

from herald.webhooks.target_guard.addresses import (
    LOOPBACK_NETWORKS,
    METADATA_ADDRESSES,
    METADATA_CATEGORY,
    METADATA_NAMES,
    AllowList,
    IPAddress,
    IPNetwork,
    is_host_name,
    is_localhost_name,
    literal_address,
    literal_address_or_invalid,
    non_public_category,
    normalise_name,
)
from herald.webhooks.target_guard.policy import (
    DEFAULT_RESOLVE_TIMEOUT_S,
    Resolver,
    TargetGuard,
    check_host_resolved,
    system_resolver,
)
from herald.webhooks.target_guard.refusals import (
    MALFORMED,
    NAME_NOT_PUBLIC,
    NOT_HTTP,
    PROVIDER_REFUSED,
    SCHEMES,
    NameNotResolved,
    Problem,
    ResolutionFailed,
    TargetRefused,
)
from herald.webhooks.target_guard.transport import GuardedTransport, connect_socket

__all__ = [
    "DEFAULT_RESOLVE_TIMEOUT_S",
    "LOOPBACK_NETWORKS",
    "MALFORMED",
    "METADATA_ADDRESSES",
    "METADATA_CATEGORY",
    "METADATA_NAMES",
    "NAME_NOT_PUBLIC",
    "NOT_HTTP",
    "PROVIDER_REFUSED",
    "SCHEMES",
    "AllowList",
    "GuardedTransport",
    "IPAddress",
    "IPNetwork",
    "NameNotResolved",
    "Problem",
    "ResolutionFailed",
    "Resolver",
    "TargetGuard",
    "TargetRefused",
    "check_host_resolved",
    "connect_socket",
    "is_host_name",
    "is_localhost_name",
    "literal_address",
    "literal_address_or_invalid",
    "non_public_category",
    "normalise_name",
    "system_resolver",
]
