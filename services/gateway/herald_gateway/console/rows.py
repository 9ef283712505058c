"""Pieces of a list page: a row's one-button form, and the link to the list's next page."""

from __future__ import annotations

from typing import Any

from herald_gateway.console.layout import form, submit
from herald_gateway.console.markup import Html, tag


def value_form(action: str, csrf: str, name: str, value: str, label: str, *, class_: str) -> Html:
    """An inline form of one button (`label`, of `class_`) that POSTs one value, `name`=`value`."""
    hidden = tag("input", type="hidden", name=name, value=value)
    return form(action, csrf, hidden, submit(label, class_=class_), class_="inline")


def more_link(listing: dict[str, Any], path: str) -> Html | None:
    """The link to the next page of a cursor-paginated list (`path` again with its cursor), if any."""
    more = listing.get("next_cursor")
    return tag("a", "More", href=f"{path}?cursor={more}") if more else None
