"""A development stack's mesh: a local CA and one certificate per service (herald.grpcio.mesh).

`herald up` makes them under `<data dir>/mesh/` at its first start and keeps them (a restarted
stack's services still trust each other); they are made again when any is within a month of
expiring. Each certificate names its service (CN `<service>`, DNS `herald-<service>`, what its
callers check) and serves both ends of a call (server and client auth). The CA's key signs
nothing after that and could be thrown away; it is kept, 0600 like every key, so the set can
be extended. In Kubernetes, cert-manager issues the same shape (deploy/k8s/base/mesh-tls.yaml).
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from herald.cli.embedded.ports import free_port
from herald.cli.stack_env import write_private
from herald.grpcio.mesh import server_name

VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Herald mesh"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])  # fmt: skip


def _pem_key(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


class MeshCertificates:
    """The CA and the services' certificates kept in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.ca_file = self.directory / "ca.crt"

    @classmethod
    def made(cls, directory: Path, services: tuple[str, ...]) -> MeshCertificates:
        """The certificates of `services` in `directory`, made if they are not there or expire soon."""
        found = cls(directory)
        found.ensure(services)
        return found

    def cert_file(self, name: str) -> Path:
        return self.directory / f"{name}.crt"

    def key_file(self, name: str) -> Path:
        return self.directory / f"{name}.key"

    def ensure(self, services: tuple[str, ...]) -> None:
        """Makes the CA and the certificates of `services` unless all exist and stay valid a while."""
        files = [self.ca_file, *(self.cert_file(s) for s in services)]
        now = datetime.datetime.now(datetime.UTC)
        if all(f.exists() for f in files) and all(
            x509.load_pem_x509_certificate(f.read_bytes()).not_valid_after_utc > now + RENEW_BEFORE for f in files
        ):
            return
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (
            x509.CertificateBuilder()
            .subject_name(_name("herald-mesh-ca"))
            .issuer_name(_name("herald-mesh-ca"))
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        write_private(self.key_file("ca"), _pem_key(ca_key))
        write_private(self.ca_file, _pem(ca))
        for service in services:
            self.issue(service, ca, ca_key, now)

    def issue(
        self, name: str, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, now: datetime.datetime
    ) -> None:
        """A certificate for `name` on this machine (127.0.0.1, localhost) and as `herald-<name>`."""
        key = ec.generate_private_key(ec.SECP256R1())
        loopback = x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))
        names = [x509.DNSName(server_name(name)), x509.DNSName("localhost"), loopback]
        certificate = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        write_private(self.key_file(name), _pem_key(key))
        write_private(self.cert_file(name), _pem(certificate))

    def service_env(self, service: str) -> dict[str, str]:
        """What a service process is given to join the mesh, and a plaintext health listener of its
        own on a free port (the stack's health checks; the mesh port takes no caller without a
        certificate)."""
        return {
            "HERALD_MESH_CA_FILE": str(self.ca_file),
            "HERALD_MESH_CERT_FILE": str(self.cert_file(service)),
            "HERALD_MESH_KEY_FILE": str(self.key_file(service)),
            "HERALD_HEALTH_PORT": str(free_port()),
        }
