"""Inbound forgery (tests/resilience/README.md): per provider scheme, forged, replayed, truncated,
malformed and cross-tenant requests are all rejected, and nothing is believed.

Today the corpus (tests/verifier/corpus/) runs against the verifier's scheme modules,
for two tenants, each with keys of its own, and crosswise: every request signed for one
tenant is refused under the other tenant's key. A replay that a scheme cannot tell apart
by itself (Paystack and Postmark carry no timestamp) must at least carry the same
de-duplication ids as the original, which is what stops it.

Over HTTP, `test_corpus_over_http` posts the same corpus (generated at the current time) to
the verifier's receivers (`/inbound/<provider>/<tenant>` for SendGrid, Resend and Postmark,
each tenant configuring its key through PUT /v1/inbound/<provider>; `/inbound/paystack` and
`/inbound/polar` on a verifier holding the platform's secrets): every non-genuine request is
answered 401 and stores nothing; every genuine one is answered 2xx. A provider the verifier
does not report (GetVerifierStatus) is skipped: "verifier receivers not built yet".
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from herald_verifier.schemes import Reason, Rejected, Verified, paystack, polar, postmark, resend, sendgrid

from herald.v1 import verifier_pb2, verifier_pb2_grpc
from tests.resilience.conftest import Resilient, remember
from tests.resilience.report import REPORT
from tests.support.api import TenantKey
from tests.support.infra import query
from tests.verifier import corpus
from tests.verifier.corpus import NOW, Case

Verify = Callable[[Mapping[str, str], bytes, Any], "Verified | Rejected"]


@dataclass
class Tenant:
    """One tenant's key material for one scheme: what signs (`secret`) and what verifies (`key`)."""

    secret: Any
    key: Any


@dataclass
class Scheme:
    provider: str
    verify: Verify
    make: Callable[[], Tenant]
    cases: Callable[[Tenant, Tenant, int], list[Case]]
    event_ids: Callable[[Mapping[str, str], bytes], list[str]]


def _whsec() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def _resend() -> Tenant:
    secret = _whsec()
    return Tenant(secret, resend.load_secret(secret))


def _polar() -> Tenant:
    secret = "polar_whs_" + secrets.token_urlsafe(32)
    return Tenant(secret, polar.load_secret(secret))


def _sendgrid() -> Tenant:
    private = ec.generate_private_key(ec.SECP256R1())
    return Tenant(private, sendgrid.load_public_key(corpus.sendgrid_public_key(private)))


def _paystack() -> Tenant:
    secret = "sk_test_" + secrets.token_hex(20)
    return Tenant(secret, paystack.load_secret(secret))


def _postmark() -> Tenant:
    credentials = (f"pm_{secrets.token_hex(6)}", secrets.token_urlsafe(32))
    return Tenant(credentials, postmark.PostmarkCredentials.from_plaintext(*credentials))


def _at_now(verify: Callable[..., Verified | Rejected]) -> Verify:
    return lambda headers, body, key: verify(headers, body, key, now=lambda: NOW)


SCHEMES = [
    Scheme(
        "resend",
        _at_now(resend.verify),
        _resend,
        lambda a, b, now: corpus.resend_cases(a.secret, b.secret, now),
        resend.event_ids,
    ),
    Scheme(
        "polar",
        _at_now(polar.verify),
        _polar,
        lambda a, b, now: corpus.polar_cases(a.secret, b.secret, now),
        polar.event_ids,
    ),
    Scheme(
        "sendgrid",
        _at_now(sendgrid.verify),
        _sendgrid,
        lambda a, b, now: corpus.sendgrid_cases(a.secret, b.secret, now),
        sendgrid.event_ids,
    ),
    Scheme(
        "paystack",
        paystack.verify,
        _paystack,
        lambda a, b, now: corpus.paystack_cases(a.secret, b.secret),
        paystack.event_ids,
    ),
    Scheme(
        "postmark",
        postmark.verify,
        _postmark,
        lambda a, b, now: corpus.postmark_cases(a.secret, b.secret),
        postmark.event_ids,
    ),
]


def verdict(outcome: Verified | Rejected) -> Reason | None:
    return outcome.reason if isinstance(outcome, Rejected) else None


@pytest.mark.parametrize("scheme", SCHEMES, ids=[s.provider for s in SCHEMES])
def test_corpus_against_the_scheme_modules_for_two_tenants(scheme: Scheme) -> None:
    first, second = scheme.make(), scheme.make()
    wrong: list[str] = []
    counts = {"genuine": 0, "rejected": 0, "cross-tenant rejected": 0, "replays caught by ids": 0}
    for mine, theirs, label in ((first, second, "tenant A"), (second, first, "tenant B")):
        cases = scheme.cases(mine, theirs, NOW)
        genuine = next(c for c in cases if c.name == "genuine")
        genuine_ids = scheme.event_ids(genuine.headers, genuine.body)
        for case in cases:
            got = verdict(scheme.verify(case.headers, case.body, mine.key))
            if got != case.expected:
                wrong.append(f"{label} {case.name!r}: owed {case.expected}, got {got}")
                continue
            if case.accepted:
                counts["genuine"] += 1
                if "rotation" in case.name:
                    continue  # carries a signature by the other key on purpose: valid under both
                # Cross-tenant: a request the provider signed for this tenant, aimed at the other tenant.
                crossed = verdict(scheme.verify(case.headers, case.body, theirs.key))
                if crossed is None:
                    wrong.append(f"{label} {case.name!r} accepted under the other tenant's key")
                else:
                    counts["cross-tenant rejected"] += 1
                if "replay" in case.name:
                    # Accepted by the scheme (no clock): only de-duplication stops it, so it must share the ids.
                    ids = scheme.event_ids(case.headers, case.body)
                    if not ids or ids != genuine_ids:
                        wrong.append(f"{label} {case.name!r}: event ids {ids} differ from the original {genuine_ids}")
                    else:
                        counts["replays caught by ids"] += 1
            else:
                counts["rejected"] += 1
    assert not wrong, "\n".join(wrong)
    REPORT.add(
        "inbound forgery (scheme modules)",
        f"{scheme.provider:<9} " + ", ".join(f"{k} {v}" for k, v in counts.items()),
    )


def verifier_providers(resilient: Resilient) -> list[str]:
    address = resilient.stack.services["verifier"].grpc_addr
    with grpc.insecure_channel(address) as channel:
        stub = verifier_pb2_grpc.VerifierServiceStub(channel)
        status = stub.GetVerifierStatus(verifier_pb2.GetVerifierStatusRequest(), timeout=10)
    return list(status.providers)


# The platform's own payment-provider secrets (verifier settings, not per tenant).
PAYSTACK_PLATFORM_KEY = "sk_test_" + "9c1e5a3f" * 5
POLAR_PLATFORM_SECRET = "polar_whs_" + "UmVzaWxpZW5jZVN1aXRlU2VjcmV0" + "k2"


@pytest.fixture(scope="module")
def payments_verifier(resilient: Resilient) -> str:
    """A verifier replica holding the platform's Paystack and Polar secrets, on ports of its own."""
    remember(PAYSTACK_PLATFORM_KEY)
    remember(POLAR_PLATFORM_SECRET)
    replica = resilient.stack.add_replica(
        "verifier",
        {"HERALD_PAYSTACK_SECRET_KEY": PAYSTACK_PLATFORM_KEY, "HERALD_POLAR_WEBHOOK_SECRET": POLAR_PLATFORM_SECRET},
    )
    return f"http://127.0.0.1:{replica.env['HERALD_HTTP_PORT']}"


def configure_inbound(resilient: Resilient, provider: str, tenant: TenantKey) -> Tenant:
    """Registers a tenant's inbound verification material for a tenant-level provider, as a tenant does
    (PUT /v1/inbound/<provider>), and answers what the provider would sign with."""
    if provider == "sendgrid":
        made = _sendgrid()
        body: dict[str, str] = {"public_key": corpus.sendgrid_public_key(made.secret)}
    elif provider == "resend":
        made = _resend()
        body = {"secret": remember(made.secret)}
    elif provider == "postmark":
        body = {}
    else:
        raise AssertionError(f"{provider} is not configured per tenant")
    response = httpx.put(f"{resilient.gateway}/v1/inbound/{provider}", json=body, headers=tenant.headers, timeout=30)
    assert response.status_code == 200, response.text
    if provider == "postmark":
        issued = response.json()
        credentials = (issued["username"], remember(issued["password"]))
        made = Tenant(credentials, postmark.PostmarkCredentials.from_plaintext(*credentials))
    return made


def stored_inbound(database_url: str) -> dict[str, int]:
    """Row counts of every table holding what inbound webhooks said (events, billing), configuration aside."""
    tables = [
        r[0]
        for r in query(
            database_url,
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            " AND (table_name LIKE 'inbound%' OR table_name LIKE 'billing%') AND table_name NOT LIKE '%config%'",
        )
    ]
    return {t: int(query(database_url, f'SELECT count(*) FROM "{t}"')[0][0]) for t in sorted(tables)}


# Over HTTP the verifier reads its own clock: the cases at the very edge of the tolerance window would
# race it. They are checked against the scheme modules above, at a fixed clock.
CLOCK_EDGE = ("just inside tolerance", "just outside tolerance")


@pytest.mark.parametrize("scheme", SCHEMES, ids=[s.provider for s in SCHEMES])
def test_corpus_over_http(resilient: Resilient, scheme: Scheme, request: pytest.FixtureRequest) -> None:
    if scheme.provider not in verifier_providers(resilient):
        pytest.skip("verifier receivers not built yet")
    now = int(time.time())
    if scheme.provider in ("paystack", "polar"):
        base = request.getfixturevalue("payments_verifier")
        url = f"{base}/inbound/{scheme.provider}"
        platform = PAYSTACK_PLATFORM_KEY if scheme.provider == "paystack" else POLAR_PLATFORM_SECRET
        mine, theirs = Tenant(platform, None), scheme.make()
    else:
        a, b = resilient.tenant(f"inbound-a-{scheme.provider}"), resilient.tenant(f"inbound-b-{scheme.provider}")
        mine = configure_inbound(resilient, scheme.provider, a)
        theirs = configure_inbound(resilient, scheme.provider, b)
        url = f"{resilient.stack.endpoints['verifier_http']}/inbound/{scheme.provider}/{a.tenant_id}"
    cases = [c for c in scheme.cases(mine, theirs, now) if not c.name.startswith(CLOCK_EDGE)]
    wrong: list[str] = []
    # Refusals first: nothing they said may be stored, or published.
    stored_before = stored_inbound(resilient.database_url)
    for case in cases:
        if case.accepted:
            continue
        response = httpx.post(url, content=case.body, headers=case.headers, timeout=10)
        if response.status_code != 401:
            wrong.append(f"{case.name!r} (owed {case.expected}): answered {response.status_code}")
    stored_after = stored_inbound(resilient.database_url)
    if stored_after != stored_before:
        wrong.append(f"refused requests stored something: {stored_before} -> {stored_after}")
    accepted = 0
    for case in cases:
        if case.accepted:
            response = httpx.post(url, content=case.body, headers=case.headers, timeout=10)
            accepted += 200 <= response.status_code < 300
            if not 200 <= response.status_code < 300:
                wrong.append(f"genuine {case.name!r}: answered {response.status_code} {response.text[:120]}")
    REPORT.add(
        "inbound forgery (over HTTP, the verifier's receivers)",
        f"{scheme.provider:<9} {sum(not c.accepted for c in cases)} refused with 401, {accepted} genuine accepted; "
        f"{len(scheme.cases(mine, theirs, now)) - len(cases)} clock-edge cases left to the module test",
    )
    assert not wrong, "\n".join(wrong)
