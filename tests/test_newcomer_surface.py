"""What a newcomer meets first on the gateway: `/` leads to the console, the API docs work with
no internet access (every script from the gateway itself) and take a bearer key, and a request
refused for its form says what to change."""

from __future__ import annotations

import json
import re
import socket
from typing import Any

import httpx

from tests.support.api import TenantKey


def test_the_root_leads_to_the_console(gateway: str) -> None:
    answer = httpx.get(f"{gateway}/", follow_redirects=False)
    assert answer.status_code in (302, 303, 307) and answer.headers["location"] == "/console"
    assert httpx.get(f"{gateway}/", follow_redirects=True).status_code == 200


def test_swagger_ui_and_redoc_load_everything_from_the_gateway(gateway: str) -> None:
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{gateway}{page}").text
        sources = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
        assert sources, html
        for source in sources:
            assert source.startswith("/"), f"{page} loads {source} from another origin"
            assert httpx.get(f"{gateway}{source}").status_code == 200, source
        assert "/openapi.json" in html


def test_the_openapi_document_declares_the_bearer_scheme(gateway: str) -> None:
    document = httpx.get(f"{gateway}/openapi.json").json()
    schemes = document["components"]["securitySchemes"]
    assert [(s["type"], s["scheme"]) for s in schemes.values()] == [("http", "bearer")]
    (name,) = schemes
    send = document["paths"]["/v1/webhooks"]["post"]
    assert send["security"] == [{name: []}]
    assert document["paths"]["/admin/v1/tenants"]["post"]["security"] == [{name: []}]


def _send(gateway: str, tenant: TenantKey, body: bytes, content_type: str) -> dict[str, Any]:
    """POST /v1/webhooks with these bytes; the 422 problem it must answer."""
    refused = httpx.post(
        f"{gateway}/v1/webhooks", content=body, headers={**tenant.headers, "content-type": content_type}
    )
    assert refused.status_code == 422, refused.text
    problem: dict[str, Any] = refused.json()
    return problem


def test_malformed_json_is_named_as_such_with_where(gateway: str, tenant: TenantKey) -> None:
    problem = _send(gateway, tenant, b'{"url": "http://127.0.0.1:9/x", "payload": {"a": 1,}}', "application/json")
    assert problem["errors"] == [{"field": "", "detail": problem["errors"][0]["detail"]}]
    assert problem["detail"].startswith("body: the body is not valid JSON at character "), problem


def test_a_body_without_a_json_content_type_says_which_header_to_send(gateway: str, tenant: TenantKey) -> None:
    problem = _send(gateway, tenant, b'{"url": "http://127.0.0.1:9/x", "payload": 1}', "text/plain")
    assert "Content-Type: application/json" in problem["detail"], problem


def test_a_body_over_the_limit_is_told_the_limit(gateway: str, tenant: TenantKey) -> None:
    # Declared and not sent: the gateway answers on the declared length alone.
    host, port = gateway.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            b"POST /v1/webhooks HTTP/1.1\r\nhost: herald\r\ncontent-type: application/json\r\n"
            + f"authorization: Bearer {tenant.api_key}\r\ncontent-length: {9 * 1024 * 1024}\r\n\r\n".encode()
        )
        answer = b""
        while b"}" not in answer:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer
    assert "limit of 8 MiB" in json.loads(body)["detail"], answer
