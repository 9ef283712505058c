"""Tenants' inbound webhook keys: how each provider's verification material is read, stored and loaded.

Shared by the gateway, which checks a key when the tenant saves it (so a wrong paste fails then, not at the
first event) and issues Postmark credentials, the ledger, which seals the material, and the verifier, which
opens it and verifies with it. The material is JSON; `load_material` turns it into the key a scheme takes.
Nothing here verifies a request: that stays in `herald_verifier.schemes`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import Final

import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from herald.secrets import associated_data

TENANT_PROVIDERS: Final = ("sendgrid", "resend", "postmark")
SVIX_SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - the prefix of every Svix secret, not a secret

_PEM_ARMOUR = ("-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def inbound_aad(provider: str, tenant_id: str) -> bytes:
    """Binds sealed material to its purpose, provider and tenant: the ledger seals with it, the verifier opens."""
    return associated_data(f"inbound:{provider}", tenant_id, "config")


def decode_base64(value: str) -> bytes | None:
    """Standard, padded base64, or None. `b64decode` alone skips stray characters unless told not to, and even
    with `validate=True` accepts surplus padding; a signature or key is either well formed or refused."""
    if not value or len(value) % 4 or not _BASE64.fullmatch(value):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        return None


@dataclass(frozen=True, slots=True)
class HmacKey:
    """A shared secret as the bytes the HMAC is keyed with. Its repr hides the value, so a key that ends up in
    a log line, a traceback or a test failure shows nothing."""

    value: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not self.value:
            raise ValueError("an HMAC key may not be empty")


def load_sendgrid_public_key(verification_key: str) -> ec.EllipticCurvePublicKey:
    """The P-256 public key from SendGrid's verification key, as the tenant pasted it.

    Accepts the base64 SendGrid shows, with or without PEM armour and line breaks. Raises ValueError for
    anything that is not a P-256 public key, so a wrong paste (an API key, an RSA key) fails when saved.
    """
    text = verification_key
    for armour in _PEM_ARMOUR:
        text = text.replace(armour, "")
    der = decode_base64("".join(text.split()))
    if der is None:
        raise ValueError("a SendGrid verification key is base64")
    try:
        key = serialization.load_der_public_key(der)
    except (ValueError, TypeError):
        raise ValueError("a SendGrid verification key is a DER public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("a SendGrid verification key is an ECDSA P-256 public key")
    return key


def load_svix_secret(secret: str) -> HmacKey:
    """The HMAC key behind a Resend (Svix) signing secret. Raises ValueError, which never quotes the secret.

    The `whsec_` prefix is optional, as in Svix's own libraries; missing base64 padding is tolerated for the
    same reason.
    """
    text = secret.strip()
    if text.startswith(SVIX_SECRET_PREFIX):
        text = text[len(SVIX_SECRET_PREFIX) :]
    text = text.rstrip("=")
    decoded = decode_base64(text + "=" * (-len(text) % 4))
    if not decoded:
        raise ValueError("a Resend signing secret is 'whsec_' followed by base64")
    return HmacKey(decoded)


def sha256(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


@dataclass(frozen=True, slots=True)
class PostmarkCredentials:
    """What Herald keeps for one tenant's Postmark webhooks: the username and digests, never the password.

    Herald issues long random passwords, so (as with API keys) a single SHA-256 is a safe way to store them.
    """

    username: str
    username_sha256: bytes = field(repr=False)
    password_sha256: bytes = field(repr=False)

    @classmethod
    def from_plaintext(cls, username: str, password: str) -> PostmarkCredentials:
        if not username or not password or ":" in username:
            raise ValueError("Basic credentials need a username without ':' and a password")
        return cls(username, sha256(username.encode("utf-8")), sha256(password.encode("utf-8")))


@dataclass(frozen=True, slots=True)
class IssuedCredentials:
    """Shown once to the tenant (to paste into Postmark), then only `stored` is kept."""

    username: str
    password: str = field(repr=False)
    stored: PostmarkCredentials


def issue_postmark_credentials() -> IssuedCredentials:
    """New random credentials, URL-safe so they fit in the webhook URL without escaping."""
    username = f"pm_{secrets.token_hex(6)}"
    password = secrets.token_urlsafe(32)
    return IssuedCredentials(username, password, PostmarkCredentials.from_plaintext(username, password))


def sendgrid_material(public_key: str) -> bytes:
    return orjson.dumps({"public_key": public_key.strip()})


def resend_material(secret: str) -> bytes:
    return orjson.dumps({"secret": secret.strip()})


def postmark_material(stored: PostmarkCredentials) -> bytes:
    return orjson.dumps(
        {
            "username": stored.username,
            "username_sha256": stored.username_sha256.hex(),
            "password_sha256": stored.password_sha256.hex(),
        }
    )


InboundKey = ec.EllipticCurvePublicKey | HmacKey | PostmarkCredentials


def load_material(provider: str, material: bytes) -> InboundKey:
    """The key a provider's scheme verifies with, from the stored material. Raises ValueError (or KeyError for
    a field that is missing) when it is not what `*_material` wrote."""
    fields = orjson.loads(material)
    if provider == "sendgrid":
        return load_sendgrid_public_key(fields["public_key"])
    if provider == "resend":
        return load_svix_secret(fields["secret"])
    if provider == "postmark":
        return PostmarkCredentials(
            fields["username"], bytes.fromhex(fields["username_sha256"]), bytes.fromhex(fields["password_sha256"])
        )
    raise ValueError(f"{provider} has no tenant inbound key")
