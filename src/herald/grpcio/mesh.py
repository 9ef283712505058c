"""Mutual TLS on the internal gRPC mesh: who may call the ledger, the router and the senders.

Without it, anyone who reaches an internal port is trusted as a service: `RouterService.SubmitJobs`
with no metadata creates jobs for any tenant. With it (HERALD_MESH_CA_FILE, HERALD_MESH_CERT_FILE,
HERALD_MESH_KEY_FILE), an internal server completes the handshake only with a caller presenting a
certificate the mesh CA signed, and a caller checks that the server holds the certificate of the
service it meant to call (`herald-<service>`, whatever address it dialled: an IP in `herald up`,
a headless Service's pod addresses in Kubernetes).

The tenant-facing gateway port is not on the mesh (tenants authenticate with API keys), nor is
the plaintext health listener (HERALD_HEALTH_PORT) that probes which cannot present a certificate
(kubelet's gRPC probes) use: it serves gRPC health and nothing else.

The cost is a TLS handshake per connection, not per call: the services open their channels once
at start and keep them for their life (`herald.grpcio.client.open_channel`), and HTTP/2 carries
every call over them; after that, each call pays only the symmetric encryption of its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from herald.config import Settings


def server_name(service: str) -> str:
    """The name a service's certificate carries (a DNS SAN), and which its callers check."""
    return f"herald-{service}"


@dataclass(frozen=True)
class MeshTls:
    ca: bytes
    cert: bytes
    key: bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> MeshTls | None:
        """The mesh's CA and this service's certificate and key, read once at start; None when the
        mesh is plaintext (the settings validate that all three are set, or none)."""
        if not settings.mesh_ca_file:
            return None
        return cls(
            ca=Path(settings.mesh_ca_file).read_bytes(),
            cert=Path(settings.mesh_cert_file).read_bytes(),
            key=Path(settings.mesh_key_file).read_bytes(),
        )

    def server_credentials(self) -> grpc.ServerCredentials:
        """Serve with this service's certificate; refuse a caller without one the mesh CA signed."""
        return grpc.ssl_server_credentials([(self.key, self.cert)], root_certificates=self.ca, require_client_auth=True)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """Present this service's certificate; trust only servers the mesh CA signed."""
        return grpc.ssl_channel_credentials(self.ca, private_key=self.key, certificate_chain=self.cert)

    def channel_options(self, service: str) -> list[tuple[str, str]]:
        """Check the server's certificate against the service called, not the address dialled."""
        return [("grpc.ssl_target_name_override", server_name(service))]
