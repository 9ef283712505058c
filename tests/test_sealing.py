"""The sealing of stored secrets, on its own: tampering, moving, unknown keys and
rotation all behave as the ledger relies on."""

from __future__ import annotations

import pytest

from herald.secrets import KeyRing, KeyRingError, SecretUnavailable, associated_data, mask, new_master_key


def ring(active: str = "a") -> KeyRing:
    return KeyRing.parse(f"a:{KEY_A},b:{KEY_B}", active)


KEY_A, KEY_B = new_master_key(), new_master_key()
AAD = associated_data("provider:sendgrid", "tenant-1", "row-1")


def test_round_trip_and_key_id() -> None:
    sealed = ring().seal(b"SG.secret", AAD)
    assert sealed.key_id == "a" and b"SG.secret" not in sealed.envelope
    assert ring().open(sealed.envelope, AAD) == b"SG.secret"


def test_every_tampered_byte_fails() -> None:
    envelope = ring().seal(b"SG.secret", AAD).envelope
    for i in range(len(envelope)):
        tampered = bytearray(envelope)
        tampered[i] ^= 0x01
        with pytest.raises(SecretUnavailable):
            ring().open(bytes(tampered), AAD)


def test_another_rows_or_tenants_associated_data_fails() -> None:
    envelope = ring().seal(b"SG.secret", AAD).envelope
    for other in (
        associated_data("provider:sendgrid", "tenant-2", "row-1"),
        associated_data("provider:sendgrid", "tenant-1", "row-2"),
        associated_data("provider:resend", "tenant-1", "row-1"),
    ):
        with pytest.raises(SecretUnavailable):
            ring().open(envelope, other)


def test_rotation_old_keys_open_new_seals_use_active() -> None:
    old = ring("a").seal(b"v", AAD)
    rotated = ring("b")
    assert rotated.open(old.envelope, AAD) == b"v"
    assert rotated.seal(b"v", AAD).key_id == "b"
    with pytest.raises(SecretUnavailable, match="does not hold"):
        KeyRing.parse(f"b:{KEY_B}", "b").open(old.envelope, AAD)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(KeyRingError):
        KeyRing.parse("", "")
    with pytest.raises(KeyRingError):
        KeyRing.parse("a:c2hvcnQ=", "a")
    with pytest.raises(KeyRingError):
        KeyRing.parse(f"a:{KEY_A}", "missing")


def test_masking_reveals_only_a_prefix_and_the_last_four() -> None:
    assert mask("SG.aBcDeFgHiJkLmNoPqRsTuV.abcd") == "SG.****abcd"
    assert mask("short-pw") == "****pw"
    assert mask("tiny") == "****"
    assert mask("smtp-password-31337", keep_prefix=False) == "****37"
