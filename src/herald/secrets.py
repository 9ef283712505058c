"""Secrets Herald must be able to read back (provider credentials, webhook signing
secrets): sealed with AES-256-GCM under a master key ring.

An envelope names the key that sealed it, so a ring can hold old keys that only
decrypt while every new seal uses the active one; `herald keys rotate` then
re-seals old envelopes. Associated data binds each envelope to where it belongs
(purpose, tenant, row), so a ciphertext copied onto another tenant's row fails to
open instead of yielding a plausible wrong value. GCM authenticates: a tampered
byte fails too.

Envelope: b"HS1" | len(key_id) (1 byte) | key_id | nonce (12) | ciphertext+tag.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

MAGIC = b"HS1"
NONCE_BYTES = 12
KEY_BYTES = 32


# The password part of `scheme://user:password@host` (also inside a comma-separated list of URLs).
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.\-]*://[^:/@\s,]*:)[^@/\s,]*@", re.IGNORECASE)


def mask_url_passwords(text: str) -> str:
    """`postgresql://herald:hunter2@db/herald` -> `postgresql://herald:****@db/herald`: settings
    reprs and log lines may show where a service connects, never with what password."""
    return _URL_PASSWORD.sub(lambda m: m.group("head") + "****@", text)


class SecretUnavailable(Exception):
    """An envelope that cannot be opened: tampered, moved, or sealed by an unknown key.
    The message never contains secret material."""


class KeyRingError(ValueError):
    """The master key configuration is unusable."""


@dataclass(frozen=True)
class Sealed:
    envelope: bytes
    key_id: str


def associated_data(purpose: str, tenant_id: str, row_id: str) -> bytes:
    return f"herald:{purpose}:{tenant_id}:{row_id}".encode()


class KeyRing:
    def __init__(self, keys: dict[str, bytes], active_key_id: str) -> None:
        if not keys:
            raise KeyRingError("no master keys configured (HERALD_MASTER_KEYS)")
        for key_id, key in keys.items():
            if len(key) != KEY_BYTES:
                raise KeyRingError(f"master key {key_id!r} must be {KEY_BYTES} bytes")
            if not key_id or len(key_id) > 64 or not key_id.replace("-", "").replace("_", "").isalnum():
                raise KeyRingError(f"master key id {key_id!r} must be 1-64 letters, digits, '-' or '_'")
        if active_key_id not in keys:
            raise KeyRingError(f"active master key {active_key_id!r} is not in the ring")
        self._keys = dict(keys)
        self.active_key_id = active_key_id

    @classmethod
    def parse(cls, spec: str, active_key_id: str) -> KeyRing:
        """`spec` is `id:base64key[,id:base64key...]`; the active key defaults to the last listed."""
        keys: dict[str, bytes] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key_id, _, encoded = part.partition(":")
            try:
                keys[key_id.strip()] = base64.b64decode(encoded.strip(), validate=True)
            except ValueError as error:
                raise KeyRingError(f"master key {key_id.strip()!r} is not valid base64") from error
        return cls(keys, active_key_id or (list(keys)[-1] if keys else ""))

    @property
    def key_ids(self) -> list[str]:
        return list(self._keys)

    def seal(self, plaintext: bytes, aad: bytes) -> Sealed:
        nonce = os.urandom(NONCE_BYTES)
        key_id = self.active_key_id
        ciphertext = AESGCM(self._keys[key_id]).encrypt(nonce, plaintext, aad + key_id.encode())
        header = MAGIC + bytes([len(key_id)]) + key_id.encode()
        return Sealed(header + nonce + ciphertext, key_id)

    def open(self, envelope: bytes, aad: bytes) -> bytes:
        key_id = envelope_key_id(envelope)
        key = self._keys.get(key_id)
        if key is None:
            raise SecretUnavailable(f"sealed by master key {key_id!r}, which this ring does not hold")
        start = len(MAGIC) + 1 + len(key_id)
        nonce, ciphertext = envelope[start : start + NONCE_BYTES], envelope[start + NONCE_BYTES :]
        try:
            return AESGCM(key).decrypt(nonce, ciphertext, aad + key_id.encode())
        except InvalidTag as error:
            raise SecretUnavailable("stored secret failed authentication (tampered, or not this row's)") from error


def envelope_key_id(envelope: bytes) -> str:
    if len(envelope) < len(MAGIC) + 2 + NONCE_BYTES or not envelope.startswith(MAGIC):
        raise SecretUnavailable("stored secret is not a Herald envelope")
    length = envelope[len(MAGIC)]
    return envelope[len(MAGIC) + 1 : len(MAGIC) + 1 + length].decode("ascii", "replace")


def new_master_key() -> str:
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


def mask(secret: str, keep_prefix: bool = True) -> str:
    """A preview that lets a tenant recognise a key without revealing it: a short
    prefix (provider keys start with a fixed marker such as `SG.` or `re_`) and the
    last four. Passwords have no such marker, so `keep_prefix=False` shows two characters."""
    if not keep_prefix:
        return f"****{secret[-2:]}" if len(secret) >= 8 else "****"
    if len(secret) >= 16:
        return f"{secret[:3]}****{secret[-4:]}"
    if len(secret) >= 8:
        return f"****{secret[-2:]}"
    return "****"
