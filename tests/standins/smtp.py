"""A real SMTP server (aiosmtpd) with AUTH, for provider validation and delivery.

TLS as a relay offers it: none, STARTTLS (required before AUTH and MAIL), or implicit TLS
from the first byte, with a certificate from `private_ca` (a CA generated for the test,
as a tenant's private relay would have). Failure modes: recipients refused with a given
reply (`reject`), DATA refused (`fail_data`). Every accepted message is recorded, parsed,
with whether it arrived over TLS.
"""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from herald.cli.embedded import free_port

TlsMode = Literal["none", "starttls", "implicit"]


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    over_tls: bool


@dataclass(frozen=True)
class Certificates:
    """A private CA and a server certificate it signed for localhost / 127.0.0.1."""

    ca_file: Path
    ca_pem: str
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def private_ca(directory: Path, common_name: str = "Herald test CA") -> Certificates:
    """Generates a CA and a server certificate (EC P-256, valid one day) under `directory`."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM).decode()
    ca_file = directory / "ca.pem"
    ca_file.write_text(ca_pem)
    cert_file = directory / "server.pem"
    cert_file.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    key_file = directory / "server.key"
    key_file.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return Certificates(ca_file, ca_pem, cert_file, key_file)


class SmtpStandIn:
    def __init__(
        self,
        username: str,
        password: str,
        *,
        tls: TlsMode = "none",
        certificates: Certificates | None = None,
    ) -> None:
        self.username = username
        self.password = password
        self.tls = tls
        self.messages: list[Any] = []
        self.received: list[Received] = []
        # Recipient -> the reply refusing it, e.g. "550 5.1.1 <x@y>: Recipient address rejected".
        self.reject: dict[str, str] = {}
        # A reply refusing DATA, e.g. "451 4.3.0 Try again later"; None accepts.
        self.fail_data: str | None = None
        stand_in = self

        class Handler:
            async def handle_RCPT(
                self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
            ) -> str:
                if address in stand_in.reject:
                    return stand_in.reject[address]
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                if stand_in.fail_data is not None:
                    return stand_in.fail_data
                stand_in.messages.append(envelope)
                content = envelope.original_content or envelope.content
                parsed = message_from_bytes(content, policy=policy.default)
                over_tls = server.transport.get_extra_info("ssl_object") is not None
                stand_in.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), parsed, over_tls))
                return "250 Message accepted for delivery"

        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
            ok = (
                isinstance(auth_data, LoginPassword)
                and auth_data.login.decode() == stand_in.username
                and auth_data.password.decode() == stand_in.password
            )
            # handled=False: aiosmtpd answers the failure itself (535), as a real server does.
            return AuthResult(success=ok, handled=False)

        tls_parameters: dict[str, Any] = {}
        if tls != "none":
            if certificates is None:
                raise ValueError("a TLS stand-in needs certificates")
            if tls == "starttls":
                tls_parameters = {"tls_context": certificates.server_context(), "require_starttls": True}
            else:
                tls_parameters = {"ssl_context": certificates.server_context()}
        self.port = free_port()
        self.controller = Controller(
            Handler(),
            hostname="127.0.0.1",
            port=self.port,
            authenticator=authenticate,
            auth_require_tls=tls == "starttls",
            auth_required=True,
            **tls_parameters,
        )
        self.controller.start()

    def close(self) -> None:
        self.controller.stop()
