"""What a Herald side's infrastructure may differ in from `herald up`'s defaults (VARIANT=, BASE_VARIANT=).

Every Herald side runs as `herald up` runs its tree: the embedded nats-server with the tree's own
`sync_interval` and NATS users (one per service, herald.cli.bus_auth), the services' gRPC over
mutual TLS (herald.grpcio.mesh), the embedded PostgreSQL with its password; a tree that predates
one of these runs without it, as its `herald up` did. A switch changes one of them for one side,
so that one invocation puts the same tree beside itself with that one thing changed:

  sync-default  the nats-server without `sync_interval` (JetStream's own default: a sync every
                2 minutes, acknowledged writes not yet on disk)
  sync-always   `sync_interval: always` (for a REV tree whose own NATS does not set it)
  plain-bus     a nats-server without users: every service connects anonymously
  plain-mesh    the services' gRPC in plaintext, without certificates
  limits-work   the work stream at limits retention, what the consumers acknowledged purged in
                bulk by the ledger (HERALD_STREAM_RETENTION=limits, herald.bus.acknowledged)

A side's switches are written joined by `+` (`plain-bus+plain-mesh`); VARIANT lists sides
separated by spaces (`VARIANT='plain-bus plain-mesh'`: two more work-tree sides).

Standard library only: the settings are checked before Herald is imported.
"""

from __future__ import annotations

from dataclasses import dataclass

SWITCHES = {
    "sync-default": "NATS sync_interval: the server's default",
    "sync-always": "NATS sync_interval: always",
    "plain-bus": "NATS without users",
    "plain-mesh": "gRPC mesh in plaintext",
    "limits-work": "work stream at limits retention",
}


@dataclass(frozen=True)
class Switches:
    """One side's infrastructure: None/True mean `herald up`'s default for the tree being run."""

    # JetStream's sync_interval: None the tree's own default, "" the server's default, "always".
    sync: str | None = None
    bus_users: bool = True
    mesh_tls: bool = True
    limits_work: bool = False

    @classmethod
    def parse(cls, side: str) -> Switches:
        """A side's switches (`plain-bus+sync-default`; empty: none); an unknown word is a ValueError."""
        words = [w for w in side.replace(",", "+").split("+") if w]
        unknown = [w for w in words if w not in SWITCHES]
        if unknown:
            known = ", ".join(SWITCHES)
            raise ValueError(f"unknown switch {', '.join(unknown)} (one of {known}, joined by +)")
        if "sync-default" in words and "sync-always" in words:
            raise ValueError("sync-default and sync-always contradict each other")
        sync = "" if "sync-default" in words else "always" if "sync-always" in words else None
        return cls(
            sync=sync,
            bus_users="plain-bus" not in words,
            mesh_tls="plain-mesh" not in words,
            limits_work="limits-work" in words,
        )

    def service_env(self) -> dict[str, str]:
        """The services' settings the switches set."""
        return {"HERALD_STREAM_RETENTION": "limits"} if self.limits_work else {}


def variant_sides(variant: str) -> list[str]:
    """VARIANT's sides, one per space-separated group of switches."""
    return variant.split()


def check(variant: str, base_variant: str) -> str | None:
    """What is wrong with VARIANT and BASE_VARIANT, or None."""
    if len(variant_sides(base_variant)) > 1:
        return "BASE_VARIANT names one side's switches (joined by +), not several"
    for side in [*variant_sides(variant), base_variant]:
        try:
            Switches.parse(side)
        except ValueError as error:
            return str(error)
    return None
