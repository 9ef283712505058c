"""Pieces of a list page: a row's one-button forms (a switch, delete) and actions, and the link
to the list's next page."""

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


def toggle(action: str, csrf: str, enabled: bool, field_name: str) -> Html:
    value = "false" if enabled else "true"
    return value_form(action, csrf, field_name, value, "Disable" if enabled else "Enable", class_="small quiet")


def delete_button(action: str, csrf: str, what: str) -> Html:
    return form(action, csrf, submit("Delete", class_="small danger"), class_="inline", data_confirm=f"Delete {what}?")


def row_actions(path: str, csrf: str, on: bool, field_name: str, edit: str, what: str) -> Html:
    """A row's switch, edit link and delete button, for the resource at `path` (its page)."""
    return tag(
        "div",
        toggle(f"{path}/update", csrf, on, field_name),
        tag("a", edit, href=path),
        delete_button(f"{path}/delete", csrf, what),
        class_="actions",
    )
