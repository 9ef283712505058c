"""HTML built in Python with escaping by construction: the console's only template engine.

No template library is in the lock, and a handful of pages do not need one. Everything that
is not already `Html` is escaped when it is put into markup (text and attribute values
alike), so a payload, a receiver's header or a body excerpt containing `<script>` is shown
as text. Only this module wraps a string in `Html` without escaping it, and only for markup
it wrote itself.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TypeAlias

VOID = frozenset({"input", "meta", "link", "br", "hr", "img"})


class Html(str):
    """Markup that is safe to emit as is: produced by `tag`, `join` or `text` only."""

    __slots__ = ()


Child: TypeAlias = Html | str | int | float | Iterable["Child"] | None


def text(value: object) -> Html:
    """Any value as escaped text (None is empty)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("" if value is None else str(value), quote=True))


def join(children: Iterable[Child]) -> Html:
    parts: list[str] = []
    for child in children:
        if child is None or child is False:
            continue
        if isinstance(child, (str, int, float)):
            parts.append(text(child))
        else:
            parts.append(join(child))
    return Html("".join(parts))


def tag(name: str, /, *children: Child, **attrs: str | int | bool | None) -> Html:
    """`<name attrs>children</name>`. Attribute names: trailing `_` dropped (`class_`),
    `_` becomes `-` (`aria_label`); True renders the bare name, False/None omits it."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        rendered.append(f" {attr}" if value is True else f' {attr}="{text(value)}"')
    opening = f"<{name}{''.join(rendered)}>"
    if name in VOID:
        return Html(opening)
    return Html(f"{opening}{join(children)}</{name}>")


def document(*children: Child) -> Html:
    return Html("<!DOCTYPE html>" + join(children))
