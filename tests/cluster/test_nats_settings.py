"""NATS_URL as NATS clients and tools take it: a comma-separated server list, credentials in a
URL, TLS with the operator's CA and a client certificate. Checked against real nats-servers."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from nats.aio.msg import Msg
from pydantic import ValidationError

from herald.bus.connection import close, connect
from herald.cli.bus_auth import BusUsers
from herald.cli.embedded import EmbeddedNatsCluster, free_port, nats_binary
from herald.config import Settings, nats_servers

CONNECT_LIMIT_S = 10.0
# How long a refused client is watched retrying.
REFUSED_WITHIN_S = 2.0


def test_a_server_list_is_split_as_nats_does() -> None:
    settings = Settings(nats_url=" nats://a:4222, tls://user:pa%2Css@b:4223 ,c:4224")
    assert nats_servers(settings.nats_url) == ["nats://a:4222", "tls://user:pa%2Css@b:4223", "nats://c:4224"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "names no server"),
        (" , ", "names no server"),
        ("http://a:4222", "scheme 'http'"),
        ("nats://a:42x22", "invalid port"),
        ("nats://a:4222/path", "host[:port]"),
        ("nats://:4222", "host[:port]"),
        ("nats://a:4222,ws://b:8080", "cannot be mixed"),
    ],
)
def test_a_wrong_server_list_stops_the_process_at_start_naming_the_setting(value: str, says: str) -> None:
    with pytest.raises(ValidationError, match="NATS_URL") as raised:
        Settings(nats_url=value)
    assert says in str(raised.value)


def test_a_refused_server_list_does_not_echo_its_password() -> None:
    with pytest.raises(ValidationError) as raised:
        Settings(nats_url="nats://herald:hunter2-secret@a:4222,http://b:4222")
    # What a crashing service prints (and a log collector keeps).
    assert "hunter2-secret" not in str(raised.value)


def test_a_client_certificate_needs_its_key() -> None:
    with pytest.raises(ValidationError, match="HERALD_NATS_TLS_KEY_FILE"):
        Settings(nats_tls_cert_file="/run/secrets/nats/tls.crt")


async def _round_trip(settings: Settings) -> None:
    """Connects as a service does and checks the server answers (a request to its own subscription)."""
    nc = await asyncio.wait_for(connect(settings, "test"), CONNECT_LIMIT_S)
    try:

        async def echo(msg: Msg) -> None:
            await msg.respond(msg.data)

        await nc.subscribe("herald.test.echo", cb=echo)
        reply = await nc.request("herald.test.echo", b"ping", timeout=5)
        assert reply.data == b"ping"
    finally:
        await close(nc)


async def test_a_service_connects_through_a_list_whose_first_server_is_down(
    nats_cluster: EmbeddedNatsCluster, cluster_users: BusUsers
) -> None:
    dead = f"nats://127.0.0.1:{free_port()}"
    # The package's cluster takes its users only (as the admin here).
    await _round_trip(Settings(nats_url=f"{dead},{nats_cluster.url}", nats_user_file=str(cluster_users.admin_file)))


# --- a secured server: TLS with a private CA, client certificates, user and password ----------


@dataclass
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _issue(
    directory: Path, name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    (directory / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / f"{name}.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    directory = tmp_path_factory.mktemp("pki")
    ca = _issue(directory, "ca", None)
    _issue(directory, "server", ca)
    _issue(directory, "client", ca)
    return Pki(*(directory / f for f in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")))


@pytest.fixture(scope="module")
def secured_nats(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A nats-server that requires TLS, verifies client certificates against our CA, and a password."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("secured") / "nats.log"
    args = [
        nats_binary(), "-a", "127.0.0.1", "-p", str(port), "--user", "herald", "--pass", "s3cret",
        "--tlsverify", "--tlscert", str(pki.server_cert), "--tlskey", str(pki.server_key),
        "--tlscacert", str(pki.ca), "-l", str(log_path),
    ]  # fmt: skip
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _secured(address: str, pki: Pki, userinfo: str = "herald:s3cret", client_cert: bool = True) -> Settings:
    return Settings(
        nats_url=f"tls://{userinfo}@{address}",
        nats_tls_ca_file=str(pki.ca),
        nats_tls_cert_file=str(pki.client_cert) if client_cert else "",
        nats_tls_key_file=str(pki.client_key) if client_cert else "",
    )


async def test_a_secured_server_is_reached_with_its_ca_a_client_certificate_and_a_password(
    secured_nats: str, pki: Pki
) -> None:
    # The server may still be starting: the first attempt is allowed to be refused.
    for _ in range(50):
        try:
            await _round_trip(_secured(secured_nats, pki))
            return
        except (OSError, TimeoutError):
            await asyncio.sleep(0.1)
    await _round_trip(_secured(secured_nats, pki))


@pytest.mark.parametrize(
    ("wrong", "logged"),
    [
        ("password", "authorization violation"),
        ("client certificate", "certificate required"),
        ("CA", "certificate verify failed"),
    ],
)
async def test_a_secured_server_refuses_a_client_without_its_credentials(
    secured_nats: str, pki: Pki, wrong: str, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    await test_a_secured_server_is_reached_with_its_ca_a_client_certificate_and_a_password(secured_nats, pki)
    settings = {
        "password": _secured(secured_nats, pki, userinfo="herald:wrong"),
        "client certificate": _secured(secured_nats, pki, client_cert=False),
        # The system's trust store does not know our private CA.
        "CA": _secured(secured_nats, pki).model_copy(update={"nats_tls_ca_file": ""}),
    }[wrong]
    # A service keeps trying (the bus may be coming up); it never gets a connection, and says why.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(connect(settings, "test"), REFUSED_WITHIN_S)
    errors = [r.getMessage() + " " + str(getattr(r, "error", "")) for r in caplog.records if r.name == "herald.bus"]
    assert errors, "the refusal is logged"
    assert logged in " ".join(errors).lower()
