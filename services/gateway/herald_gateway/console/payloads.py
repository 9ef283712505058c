"""A payload as the console shows it: what the API reads back (`payload` when JSON,
`payload_base64` always) as text, pretty-printed when it is JSON, cut at SHOWN_BYTES. It is the
tenant's input: it goes into the page as escaped text (console.markup), never as markup."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from herald_gateway.console.markup import Html, join, tag

SHOWN_BYTES = 64 * 1024


def payload_text(body: dict[str, Any]) -> tuple[str, int]:
    """The payload as text and its size in bytes as sent."""
    try:
        raw = base64.b64decode(body.get("payload_base64") or "", validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if body.get("payload") is not None:
        return json.dumps(body["payload"], indent=2, ensure_ascii=False), len(raw)
    return raw[:SHOWN_BYTES].decode("utf-8", errors="replace"), len(raw)


def payload_block(body: dict[str, Any], ident: str = "payload") -> Html:
    shown, size = payload_text(body)
    cut = len(shown.encode()) > SHOWN_BYTES
    if cut:
        shown = shown.encode()[:SHOWN_BYTES].decode("utf-8", errors="ignore")
    note = f"{size:,} bytes" + (f"; the first {SHOWN_BYTES // 1024} KiB shown" if cut else "")
    return join(
        [
            tag("p", body.get("content_type") or "(no content type)", " · ", note, class_="muted"),
            tag("pre", shown or "(empty)", class_="excerpt", id=ident),
        ]
    )
