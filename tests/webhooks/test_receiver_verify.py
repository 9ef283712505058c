"""The receiver-side helpers in clients/python (`herald_webhooks`), checked against signatures made
by Herald's own signing functions and by the official `standardwebhooks` library."""

from __future__ import annotations

import base64
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.message import Message
from http.server import HTTPServer
from pathlib import Path

import httpx
import pytest
from herald_webhooks import DEFAULT_TOLERANCE_S, VerifiedWebhook, WebhookVerificationError, verify, verify_standard
from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as OfficialError

from herald.crypto import new_webhook_secret, sign_payload, sign_standard_webhook

TS = 1_767_225_600  # 2026-01-01T00:00:00Z
BODY = b'{"type":"orders.created.v1","id":"o_1","note":"caf\xc3\xa9"}'
JOB_ID = "0195f3a2-7c1e-7000-8000-00000000abcd"


def herald_headers(secrets_: list[str], timestamp: int = TS, body: bytes = BODY) -> dict[str, str]:
    """What Herald's sender attaches (herald_webhook_sender.signing): both schemes, one signature per secret."""
    return {
        "X-Webhook-Timestamp": str(timestamp),
        "X-Webhook-Signature": ",".join(sign_payload(s, timestamp, body) for s in secrets_),
        "webhook-id": JOB_ID,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(sign_standard_webhook(s, JOB_ID, timestamp, body) for s in secrets_),
    }


def reason(error: pytest.ExceptionInfo[WebhookVerificationError]) -> str:
    return error.value.reason


@pytest.fixture
def secret() -> str:
    return new_webhook_secret()


def test_herald_pair_verifies(secret: str) -> None:
    assert verify(secret, BODY, herald_headers([secret]), now=TS + 10) == VerifiedWebhook(TS, None)


def test_any_body_bytes_not_just_utf8(secret: str) -> None:
    body = bytes(range(256)) * 4
    headers = herald_headers([secret], body=body)
    assert verify(secret, body, headers, now=TS).timestamp == TS
    assert verify(secret, bytearray(body), headers, now=TS).timestamp == TS
    assert verify(secret, memoryview(body), headers, now=TS).timestamp == TS
    assert verify_standard(secret, body, headers, now=TS).webhook_id == JOB_ID


def test_independent_hmac_agrees(secret: str) -> None:
    """A receiver following mission.md by hand computes the same digest the helper accepts."""
    import hashlib
    import hmac

    digest = hmac.new(secret.encode(), f"{TS}.".encode() + BODY, hashlib.sha256).hexdigest()
    headers = {"x-webhook-timestamp": str(TS), "x-webhook-signature": digest}
    assert verify(secret, BODY, headers, now=TS).timestamp == TS
    headers["x-webhook-signature"] = digest.upper()
    assert verify(secret, BODY, headers, now=TS).timestamp == TS


def test_header_containers(secret: str) -> None:
    signed = herald_headers([secret])
    message = Message()  # what http.server hands a handler
    for name, value in signed.items():
        message[name] = value
    forms: list[object] = [
        signed,
        {k.upper(): v for k, v in signed.items()},
        httpx.Headers(signed),
        list(signed.items()),
        [(k.lower().encode(), v.encode()) for k, v in signed.items()],  # ASGI scope headers
        message,
    ]
    for headers in forms:
        assert verify(secret, BODY, headers, now=TS).timestamp == TS  # type: ignore[arg-type]
        assert verify_standard(secret, BODY, headers, now=TS).webhook_id == JOB_ID  # type: ignore[arg-type]


@pytest.mark.parametrize("check", [verify, verify_standard])
def test_replayed_old_timestamps_are_refused(secret: str, check: Callable[..., VerifiedWebhook]) -> None:
    headers = herald_headers([secret])
    assert DEFAULT_TOLERANCE_S == 300
    assert check(secret, BODY, headers, now=TS + 300).timestamp == TS
    with pytest.raises(WebhookVerificationError) as old:
        check(secret, BODY, headers, now=TS + 301)
    assert reason(old) == "timestamp_too_old"
    with pytest.raises(WebhookVerificationError) as days_later:
        check(secret, BODY, headers, now=TS + 86400 * 3)
    assert reason(days_later) == "timestamp_too_old"
    assert check(secret, BODY, headers, now=TS - 300).timestamp == TS
    with pytest.raises(WebhookVerificationError) as future:
        check(secret, BODY, headers, now=TS - 301)
    assert reason(future) == "timestamp_in_future"
    assert check(secret, BODY, headers, now=TS + 3000, tolerance_s=3600).timestamp == TS


def test_replay_with_a_fresh_timestamp_does_not_match(secret: str) -> None:
    """Updating only the timestamp header to pass the window breaks the signature."""
    headers = herald_headers([secret])
    headers["X-Webhook-Timestamp"] = headers["webhook-timestamp"] = str(TS + 3600)
    for check in (verify, verify_standard):
        with pytest.raises(WebhookVerificationError) as error:
            check(secret, BODY, headers, now=TS + 3600)
        assert reason(error) == "signature_mismatch"


@pytest.mark.parametrize(
    "tampered",
    [BODY + b" ", BODY.replace(b"o_1", b"o_2"), BODY[:-1], b"", BODY.replace(b'"id"', b'"Id"')],
)
def test_tampered_bodies_are_refused(secret: str, tampered: bytes) -> None:
    headers = herald_headers([secret])
    for check in (verify, verify_standard):
        with pytest.raises(WebhookVerificationError) as error:
            check(secret, tampered, headers, now=TS)
        assert reason(error) == "signature_mismatch"


def test_wrong_secret_is_refused(secret: str) -> None:
    headers = herald_headers([secret])
    for check in (verify, verify_standard):
        with pytest.raises(WebhookVerificationError) as error:
            check(new_webhook_secret(), BODY, headers, now=TS)
        assert reason(error) == "signature_mismatch"


def test_rotation_both_secrets_sign_and_either_verifies(secret: str) -> None:
    old = new_webhook_secret()
    headers = herald_headers([secret, old])
    assert headers["X-Webhook-Signature"].count(",") == 1
    assert headers["webhook-signature"].count(" ") == 1
    for check in (verify, verify_standard):
        assert check(secret, BODY, headers, now=TS).timestamp == TS
        assert check(old, BODY, headers, now=TS).timestamp == TS
        with pytest.raises(WebhookVerificationError):
            check(new_webhook_secret(), BODY, headers, now=TS)
        # A receiver mid-rotation on its side passes both of its secrets.
        assert check([new_webhook_secret(), old], BODY, headers, now=TS).timestamp == TS
    # Signatures split across repeated headers (as some proxies forward them) still count.
    split = [(k, v) for k, v in headers.items() if k.lower() != "x-webhook-signature"]
    split += [("X-Webhook-Signature", s) for s in headers["X-Webhook-Signature"].split(",")]
    assert verify(old, BODY, split, now=TS).timestamp == TS


def test_standard_webhooks_signed_by_the_official_library(secret: str) -> None:
    official = Webhook(secret)
    signature = official.sign(JOB_ID, datetime.fromtimestamp(TS, UTC), BODY.decode())
    headers = {"webhook-id": JOB_ID, "webhook-timestamp": str(TS), "webhook-signature": signature}
    assert verify_standard(secret, BODY, headers, now=TS) == VerifiedWebhook(TS, JOB_ID)
    # Herald's own signing function and the official library produce the same signature.
    assert signature == sign_standard_webhook(secret, JOB_ID, TS, BODY)


def test_official_library_and_ours_agree_on_live_requests(secret: str) -> None:
    """The official verifier reads the real clock, so these requests are stamped now."""
    now = int(time.time())
    old = new_webhook_secret()
    cases: list[tuple[str, bytes, dict[str, str], bool]] = [
        ("genuine", BODY, herald_headers([secret], now), True),
        ("rotation", BODY, herald_headers([old, secret], now), True),
        ("tampered", BODY + b"!", herald_headers([secret], now), False),
        ("replayed", BODY, herald_headers([secret], now - 600), False),
        ("other secret", BODY, herald_headers([old], now), False),
    ]
    for name, body, headers, genuine in cases:
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
            official_says = True
        except OfficialError:
            official_says = False
        try:
            verify_standard(secret, body, headers)
            verify(secret, body, headers)
            ours_says = True
        except WebhookVerificationError:
            ours_says = False
        assert official_says is ours_says is genuine, name


def test_other_signature_versions_are_ignored(secret: str) -> None:
    good = sign_standard_webhook(secret, JOB_ID, TS, BODY)
    fake = "v1a," + base64.b64encode(secrets.token_bytes(64)).decode()
    headers = {"webhook-id": JOB_ID, "webhook-timestamp": str(TS), "webhook-signature": f"{fake} v2,{good[3:]}"}
    with pytest.raises(WebhookVerificationError):
        verify_standard(secret, BODY, headers, now=TS)
    headers["webhook-signature"] = f"{fake} {good}"
    assert verify_standard(secret, BODY, headers, now=TS).webhook_id == JOB_ID


def test_the_webhook_id_is_covered_by_the_signature(secret: str) -> None:
    headers = herald_headers([secret])
    headers["webhook-id"] = "another-id"
    with pytest.raises(WebhookVerificationError) as error:
        verify_standard(secret, BODY, headers, now=TS)
    assert reason(error) == "signature_mismatch"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"X-Webhook-Timestamp": None}, "missing_header"),
        ({"X-Webhook-Signature": None}, "missing_header"),
        ({"X-Webhook-Signature": " , "}, "missing_header"),
        ({"X-Webhook-Timestamp": "abc"}, "invalid_header"),
        ({"X-Webhook-Timestamp": "1767225600.5"}, "invalid_header"),
        ({"X-Webhook-Timestamp": "-1767225600"}, "invalid_header"),
        ({"X-Webhook-Timestamp": ""}, "missing_header"),
        ({"X-Webhook-Signature": "not-hex"}, "signature_mismatch"),
    ],
)
def test_broken_herald_headers(secret: str, change: dict[str, str | None], expected: str) -> None:
    headers = herald_headers([secret])
    for name, value in change.items():
        if value is None:
            del headers[name]
        else:
            headers[name] = value
    with pytest.raises(WebhookVerificationError) as error:
        verify(secret, BODY, headers, now=TS)
    assert reason(error) == expected


def test_conflicting_duplicate_timestamps_are_refused(secret: str) -> None:
    pairs = [*herald_headers([secret]).items(), ("x-webhook-timestamp", str(TS + 1))]
    with pytest.raises(WebhookVerificationError) as error:
        verify(secret, BODY, pairs, now=TS)
    assert reason(error) == "invalid_header"


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_broken_standard_headers(secret: str, missing: str) -> None:
    headers = herald_headers([secret])
    del headers[missing]
    with pytest.raises(WebhookVerificationError) as error:
        verify_standard(secret, BODY, headers, now=TS)
    assert reason(error) == "missing_header"


def test_misuse_is_a_programming_error_not_a_verification_failure(secret: str) -> None:
    headers = herald_headers([secret])
    with pytest.raises(TypeError, match="raw request body"):
        verify(secret, BODY.decode(), headers, now=TS)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Standard Webhooks secret"):
        verify_standard("whsec_not base64!", BODY, headers, now=TS)
    with pytest.raises(ValueError):
        verify([], BODY, headers, now=TS)
    with pytest.raises(ValueError):
        verify("", BODY, headers, now=TS)
    unpadded = secret.rstrip("=")  # the official library accepts these, and so do we
    assert verify_standard(unpadded, BODY, headers, now=TS).webhook_id == JOB_ID


def test_error_messages_reveal_no_secret_or_signature(secret: str) -> None:
    headers = herald_headers([secret])
    for check, body in ((verify, b"x"), (verify_standard, b"x")):
        with pytest.raises(WebhookVerificationError) as error:
            check(secret, body, headers, now=TS)
        text = str(error.value)
        assert secret not in text and secret[6:] not in text
        assert headers["X-Webhook-Signature"] not in text and headers["webhook-signature"][3:] not in text


@pytest.fixture
def readme_receiver(secret: str) -> Iterator[str]:
    """The README's example receiver, run as written (with the secret and a free port)."""
    readme = (Path(__file__).parents[2] / "clients/python/README.md").read_text()
    [code] = [block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "HTTPServer(" in block]
    code = code.replace('"whsec_..."', repr(secret)).replace("HTTPServer(", "server = HTTPServer(")
    code = code.replace(".serve_forever()", "").replace('("127.0.0.1", 8000)', '("127.0.0.1", 0)')
    assert '("127.0.0.1", 0)' in code
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    server = namespace["server"]
    assert isinstance(server, HTTPServer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def test_the_readme_example_receiver(readme_receiver: str, secret: str) -> None:
    now = int(time.time())
    accepted = httpx.post(readme_receiver, content=BODY, headers=herald_headers([secret], now, BODY))
    assert accepted.status_code == 204
    forged = httpx.post(readme_receiver, content=BODY, headers=herald_headers([new_webhook_secret()], now, BODY))
    assert forged.status_code == 400
    replayed = httpx.post(readme_receiver, content=BODY, headers=herald_headers([secret], now - 3600, BODY))
    assert replayed.status_code == 400
    assert httpx.post(readme_receiver, content=BODY).status_code == 400


def test_the_readme_example_deduplicates_only_on_a_signed_id(readme_receiver: str, secret: str) -> None:
    """`webhook-id` is covered by the Standard Webhooks signature only: the example verifies that
    one, so a delivery whose id was changed (to slip past, or to collide with, de-duplication) is refused."""
    now = int(time.time())
    headers = herald_headers([secret], now, BODY)
    assert httpx.post(readme_receiver, content=BODY, headers=headers).status_code == 204
    assert httpx.post(readme_receiver, content=BODY, headers=headers).status_code == 204  # a retry: handled once
    renamed = {**headers, "webhook-id": "msg_someone_elses_id"}
    assert httpx.post(readme_receiver, content=BODY, headers=renamed).status_code == 400
