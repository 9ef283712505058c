"""The providers' HTTP APIs, called through the guarded client every sender shares.

A provider's base URL is tenant-aimed (a regional endpoint, a stand-in), so every call goes
through `herald.webhooks.receiver_client.ReceiverClient` behind the target guard: the address
checked is the address connected to, TLS and the Host header keep the name, no redirects, no
proxy from the environment, keep-alive per provider host. Bodies are JSON; answers are read to
at most READ_BYTES, which is far more than any provider's JSON answer and bounds what a base URL
pointing elsewhere can make the sender read.

A provider's send is an `HttpProvider`: its body, its headers and its reading of the answer,
the only parts that differ; the call, and what getting no answer means, are the same for all.
`check` does the same for credential checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson

from herald.v1 import common_pb2
from herald.webhooks.receiver_client import Answer, ReceiverClient
from herald.webhooks.retry_policy import ReceiverCallError
from herald.webhooks.target_guard import TargetRefused
from herald_email_sender.outcome import SEND_TIMEOUT_S, SendResult, api_root, from_http_error
from herald_email_sender.providers import validation
from herald_email_sender.providers.validation import VALIDATION_TIMEOUT_S, Validation

READ_BYTES = 256 * 1024
NO_ANSWER = (TargetRefused, ReceiverCallError)
NO_OPTIONS: Mapping[str, str] = MappingProxyType({})

# The send's JSON body, from the request and the provider config's options.
Payload = Callable[[common_pb2.EmailRequest, Mapping[str, str]], dict[str, Any]]
# (credential, idempotency key) -> the request's headers, or the outcome when it cannot be sent.
Headers = Callable[[str, str], dict[str, str] | SendResult]
# (answer, credential) -> what the answer means; the credential is masked out of error texts.
Reading = Callable[[Answer, str], SendResult]


async def call(
    client: ReceiverClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Any = None,
    timeout_s: float | None = None,
) -> Answer:
    """One call with a JSON body (when given); raises TargetRefused or ReceiverCallError."""
    sending = dict(headers)
    data = None
    if body is not None:
        data = orjson.dumps(body)
        sending["content-type"] = "application/json"
    return await client.request(method, url, body=data, headers=sending, timeout_s=timeout_s, read_bytes=READ_BYTES)


@dataclass(frozen=True)
class HttpProvider:
    """One provider's send API: POST `send_path` under the base URL."""

    default_base_url: str
    send_path: str
    payload: Payload
    headers: Headers
    read: Reading

    async def send(
        self,
        client: ReceiverClient,
        credential: str,
        request: common_pb2.EmailRequest,
        *,
        base_url: str = "",
        idempotency_key: str = "",
        timeout_s: float = SEND_TIMEOUT_S,
        options: Mapping[str, str] = NO_OPTIONS,
    ) -> SendResult:
        """One send: never raises for the provider's behaviour, every answer and every failure
        to get one is a SendResult."""
        headers = self.headers(credential, idempotency_key)
        if isinstance(headers, SendResult):
            return headers
        url = f"{api_root(base_url, self.default_base_url)}{self.send_path}"
        body = self.payload(request, options)
        try:
            answer = await call(client, "POST", url, headers=headers, body=body, timeout_s=timeout_s)
        except NO_ANSWER as error:
            return from_http_error(error, timeout_s)
        return self.read(answer, credential)


async def check(
    client: ReceiverClient, url: str, headers: Mapping[str, str], provider: str = ""
) -> Answer | Validation:
    """GETs what proves a credential: the provider's answer, or the verdict of getting none.
    With `provider` named, the common answers (5xx and 429 unreachable, 401/403 rejected) are
    verdicts too (`validation.from_status`), and only the rest comes back as an answer."""
    try:
        answer = await call(client, "GET", url, headers=headers, timeout_s=VALIDATION_TIMEOUT_S)
    except NO_ANSWER as error:
        return validation.from_http_error(error)
    if provider:
        verdict = validation.from_status(answer, provider)
        if verdict is not None:
            return verdict
    return answer
