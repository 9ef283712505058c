"""Real HTTP(S) servers on loopback addresses, a stand-in DNS, and a throwaway certificate
authority, for the target guard's send-time tests. Nothing here talks beyond 127.0.0.0/8."""

from __future__ import annotations

import contextlib
import datetime
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    # As sent: every header line, repeats kept; and the client's port (one per connection).
    raw_headers: list[tuple[str, str]] = field(default_factory=list)
    peer_port: int = 0


class LocalServer:
    """Answers every request with `status` (and `headers`), recording what arrived."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, status: int = 204) -> None:
        self.requests: list[Seen] = []
        self.status = status
        self.headers: dict[str, str] = {}
        self.body = b""  # what every answer carries
        self.delay_s = 0.0  # how long before answering
        self.server_names: list[str | None] = []  # TLS SNI values, when serving HTTPS
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                server.requests.append(
                    Seen(
                        self.command,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                        list(self.headers.items()),
                        int(self.client_address[1]),
                    )
                )
                if server.delay_s:
                    time.sleep(server.delay_s)
                self.send_response(server.status)
                for name, value in server.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(server.body)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(server.body)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    def serve_tls(self, certificate: Path, key: Path) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        context.sni_callback = lambda _sock, name, _ctx: self.server_names.append(name)  # type: ignore[assignment,misc,return-value]
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)

    def start(self) -> LocalServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def server_pair(first: str, second: str) -> tuple[LocalServer, LocalServer]:
    """Two servers on the same port of two loopback addresses (retrying if the port is taken)."""
    for _ in range(20):
        a = LocalServer(first)
        try:
            b = LocalServer(second, a.port)
        except OSError:
            a.httpd.server_close()
            continue
        return a.start(), b.start()
    raise RuntimeError("no port free on both addresses")


@dataclass
class StandInDNS:
    """Answers from a table the test controls, and remembers every question."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    questions: list[str] = field(default_factory=list)

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.questions.append(host)
        if host not in self.answers:
            raise OSError(f"{host} does not resolve")
        return list(self.answers[host])


@dataclass(frozen=True)
class Authority:
    ca_file: Path
    certificate: Path
    key: Path


def make_authority(directory: Path, name: str) -> Authority:
    """A CA and a server certificate for `name` (no IP address in it) signed by that CA."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Herald test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    certificate = directory / "server.pem"
    certificate.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file = directory / "server.key"
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return Authority(ca_file, certificate, key_file)
