"""Hostile input (tests/resilience/README.md), first half: the gateway's HTTP surface fuzzed from
its own OpenAPI document (the second half, malformed and oversized requests, slow clients
and garbage gRPC, is in test_hostile_input*.py).

Schemathesis generates requests for every operation of /openapi.json (valid and invalid
data), with a valid key (the tenant's on /v1, the operator's on /admin), with no key,
and with the other kind of key. What must hold:
- no 5xx, ever (503 `provider-unreachable` aside: a provider the fuzzer pointed at a closed port);
- every 2xx conforms to the documented schema and content type;
- every error is RFC 9457 problem+json whose `status` is the HTTP status;
- without a valid key of the right kind, nothing succeeds.
Whether the OpenAPI document *describes* the errors it answers (status codes, problem+json)
is measured separately and reported, and must hold too.

Outbound traffic stays on 127.0.0.1: every URL or host the fuzzer puts in a body (webhook
targets, provider base URLs, SMTP hosts) is pinned to a local receiver or stand-in
before the request is sent.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.resilience.conftest import Resilient
from tests.resilience.profile import PROFILE
from tests.resilience.receivers import FlakyReceiver
from tests.resilience.report import REPORT
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, openapi_document

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (see the dev dependencies)")
hypothesis = pytest.importorskip("hypothesis")
requests = pytest.importorskip("requests")  # schemathesis's transport

PROBLEM = "application/problem+json"
# What the fuzzer may legitimately meet that is not the gateway's fault.
TOLERATED_5XX = {"https://herald.dev/problems/provider-unreachable"}


@dataclass
class Targets:
    """Where the fuzzer's outbound URLs are pinned."""

    receiver: FlakyReceiver
    sendgrid: SendGridStandIn
    closed_port: int


@pytest.fixture(scope="module")
def targets() -> Iterator[Targets]:
    receiver, sendgrid = FlakyReceiver("fuzz"), SendGridStandIn()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    try:
        yield Targets(receiver, sendgrid, closed_port)
    finally:
        receiver.close()
        sendgrid.close()


@pytest.fixture(scope="module")
def fuzz_tenant(resilient: Resilient) -> TenantKey:
    return resilient.tenant("fuzz")


# --- keeping the fuzzer's traffic local ------------------------------------------------------


def _is_loopback_literal(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def confine(value: Any, targets: Targets, key: str = "") -> Any:
    """Rewrites every URL or host in a generated body that could leave this machine."""
    if isinstance(value, dict):
        out = {k: confine(v, targets, str(k)) for k, v in value.items()}
        if "host" in out and "port" in out:
            out["port"] = targets.closed_port
        return out
    if isinstance(value, list):
        return [confine(v, targets, key) for v in value]
    if isinstance(value, str) and key.lower().endswith("url"):
        try:
            parts = urlsplit(value.strip())
            host = parts.hostname or ""
        except ValueError:
            return value  # not even a URL: harmless, and the gateway must refuse it
        if host and not _is_loopback_literal(host):
            return targets.sendgrid.base_url if key.lower() == "base_url" else f"{targets.receiver.base_url}/fuzz"
        if not host and "." in value:
            return f"{targets.receiver.base_url}/fuzz"
        return value
    if isinstance(value, str) and key.lower() in ("host", "smtp_host"):
        return "127.0.0.1"
    return value


# --- the fuzz run -----------------------------------------------------------------------------


@dataclass
class Finding:
    operation: str
    mode: str
    problem: str
    request: str

    def line(self) -> str:
        return f"[{self.mode}] {self.operation}: {self.problem}\n    {self.request}"


@dataclass
class FuzzRun:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    # The OpenAPI document not describing what the gateway answered (reported, see the xfail test).
    undocumented: Counter[tuple[int, str]] = field(default_factory=Counter)
    undocumented_operations: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    tolerated: int = 0
    operations: set[str] = field(default_factory=set)


RUNS: dict[str, FuzzRun] = {}


def _problem_shape(response: Any) -> str | None:
    content_type = response.headers.get("content-type", "")
    if isinstance(content_type, list):
        content_type = content_type[0] if content_type else ""
    if not content_type.startswith(PROBLEM):
        return f"error {response.status_code} is {content_type!r}, not {PROBLEM}"
    try:
        body = json.loads(response.content or b"")
    except ValueError:
        return f"error {response.status_code} body is not JSON"
    missing = [k for k in ("type", "title", "status", "detail") if k not in body]
    if missing:
        return f"error {response.status_code} problem lacks {missing}"
    if body["status"] != response.status_code:
        return f"problem says status {body['status']} on an HTTP {response.status_code}"
    return None


def _check(case: Any, response: Any, check: Callable[..., Any]) -> str | None:
    try:
        case.validate_response(response, checks=[check])
    except (Exception, BaseExceptionGroup) as error:  # schemathesis raises a FailureGroup (a BaseExceptionGroup)
        failures = getattr(error, "exceptions", None) or [error]
        return " | ".join(" ".join(str(f).split()) for f in failures)[:300]
    return None


def fuzz(
    resilient: Resilient,
    targets: Targets,
    mode: str,
    headers_for: Callable[[Any], dict[str, str] | None],
    examples: int,
) -> FuzzRun:
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    document = openapi_document(resilient.gateway)
    schema = schemathesis.openapi.from_dict(document)
    run = FuzzRun()
    generation = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if mode == "valid key" else [])
    session = requests.Session()

    def exercise(case: Any) -> None:
        label = case.operation.label
        run.operations.add(label)
        if case.body is not None and not isinstance(case.body, bytes | str):
            case.body = confine(case.body, targets)
        case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
        auth = headers_for(case)
        if auth:
            case.headers.update(auth)
        try:
            response = case.call(base_url=resilient.gateway, session=session, timeout=30)
        except Exception as error:  # a transport error is a finding too (the gateway hung up)
            run.findings.append(Finding(label, mode, f"no answer: {error!r}"[:300], _describe(case)))
            return
        run.requests += 1
        run.statuses[response.status_code] += 1
        problems: list[str] = []
        if response.status_code >= 500:
            shape = _problem_type(response)
            if response.status_code == 503 and shape in TOLERATED_5XX:
                run.tolerated += 1
            else:
                problems.append(_check(case, response, not_a_server_error) or f"HTTP {response.status_code}")
        elif 200 <= response.status_code < 300:
            # Operations documented `security: []` (the health routes) are public by design.
            public = case.operation.definition.raw.get("security") == []
            if mode != "valid key" and not public:
                problems.append(f"{response.status_code} without a valid key")
            for check in (response_schema_conformance, content_type_conformance):
                failure = _check(case, response, check)
                if failure:
                    problems.append(f"{check.__name__}: {failure}")
        else:
            shape = _problem_shape(response)
            if shape:
                problems.append(shape)
            for check in (status_code_conformance, response_schema_conformance, content_type_conformance):
                if _check(case, response, check):
                    run.undocumented[(response.status_code, check.__name__)] += 1
                    run.undocumented_operations.setdefault((response.status_code, check.__name__), set()).add(label)
        for problem in problems:
            run.findings.append(Finding(label, mode, problem, _describe(case)))

    for result in schema.get_all_operations():
        operation = result.ok()
        for generation_mode in generation:
            if generation_mode == GenerationMode.NEGATIVE and not _has_input(operation.definition.raw):
                continue  # only free-form path strings and headers: nothing to make invalid, slow to try
            try:
                strategy = operation.as_strategy(generation_mode=generation_mode)
            except Exception as error:
                run.findings.append(Finding(operation.label, mode, f"cannot generate: {error!r}"[:200], ""))
                continue

            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=False,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def one(case: Any) -> None:
                exercise(case)

            try:
                one()
            except Exception as error:  # hypothesis could not generate (Unsatisfiable and the like)
                if "Unsatisfiable" not in type(error).__name__:
                    run.findings.append(Finding(operation.label, mode, f"generation failed: {error!r}"[:200], ""))
    session.close()
    return run


def _has_input(definition: dict[str, Any]) -> bool:
    """Whether an operation takes a body or query parameters (what negative data can break)."""
    parameters = definition.get("parameters", [])
    return "requestBody" in definition or any(p.get("in") == "query" for p in parameters)


def _problem_type(response: Any) -> str:
    try:
        return str(json.loads(response.content or b"").get("type", ""))
    except (ValueError, AttributeError):
        return ""


def _describe(case: Any) -> str:
    body = case.body if case.body is not None else ""
    text = json.dumps(body, default=str) if not isinstance(body, bytes | str) else repr(body)
    return f"{case.method} {case.formatted_path} query={case.query} body={text[:300]}"


MODES = ("valid key", "no key", "other kind of key")


@pytest.mark.timeout(PROFILE.timeout_s)
@pytest.mark.parametrize("mode", MODES)
def test_fuzz_every_operation(resilient: Resilient, targets: Targets, fuzz_tenant: TenantKey, mode: str) -> None:
    operator = resilient.operator_headers

    def headers_for(case: Any) -> dict[str, str] | None:
        admin = case.operation.path.startswith("/admin/")
        if mode == "valid key":
            return operator if admin else fuzz_tenant.headers
        if mode == "other kind of key":
            return fuzz_tenant.headers if admin else operator
        return None

    examples = PROFILE.fuzz_examples if mode == "valid key" else PROFILE.fuzz_examples_unauthenticated
    started = time.monotonic()
    run = fuzz(resilient, targets, mode, headers_for, examples)
    RUNS[mode] = run
    statuses = ", ".join(f"{s}x{n}" for s, n in sorted(run.statuses.items()))
    REPORT.add(
        "hostile input: schemathesis",
        f"{mode:<18} {len(run.operations)} operations, {run.requests} requests in {time.monotonic() - started:.0f}s "
        f"({statuses}); findings {len(run.findings)}; undocumented answers {sum(run.undocumented.values())}"
        + (f"; tolerated provider-unreachable {run.tolerated}" if run.tolerated else ""),
    )
    assert len(run.operations) >= 30, f"only {len(run.operations)} operations were exercised"
    assert not run.findings, f"{len(run.findings)} findings:\n" + "\n".join(f.line() for f in run.findings[:40])


def test_openapi_documents_every_answer_the_gateway_gives() -> None:
    if not RUNS:
        pytest.skip("the fuzz runs did not run")
    undocumented: Counter[tuple[int, str]] = Counter()
    operations: dict[tuple[int, str], set[str]] = {}
    for run in RUNS.values():
        undocumented.update(run.undocumented)
        for kind, labels in run.undocumented_operations.items():
            operations.setdefault(kind, set()).update(labels)
    for (status, check), count in sorted(undocumented.items()):
        REPORT.add(
            "hostile input: answers /openapi.json does not describe",
            f"HTTP {status} fails {check}: {count} answers, {len(operations[(status, check)])} operations",
        )
    assert not undocumented, f"{len(undocumented)} kinds of answers are not described by /openapi.json"
