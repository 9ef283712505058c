"""Walking the gateway's own OpenAPI document: its operations, and the smallest
request body each one accepts, so tests derive the route table instead of listing it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    spec: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def path_params(self) -> list[str]:
        return [p["name"] for p in self.spec.get("parameters", []) if p.get("in") == "path"]

    @property
    def is_admin(self) -> bool:
        return self.path.startswith("/admin/")

    def body_schema(self) -> dict[str, Any] | None:
        content = (self.spec.get("requestBody") or {}).get("content") or {}
        media = content.get("application/json")
        return None if media is None else media.get("schema")


def operations(document: Mapping[str, Any]) -> Iterator[Operation]:
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                yield Operation(method, path, item[method])


def resolve(document: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for part in str(schema["$ref"]).removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return dict(schema)


def minimal(document: Mapping[str, Any], schema: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
    """The smallest value `schema` accepts: required properties only, plus any property
    named in `values` (which also says what to put there, at any depth)."""
    schema = resolve(document, schema)
    if "anyOf" in schema or "oneOf" in schema:
        options = [resolve(document, o) for o in schema.get("anyOf", schema.get("oneOf", []))]
        usable = [o for o in options if o.get("type") != "null"] or options
        return minimal(document, usable[0], values)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        out: dict[str, Any] = {}
        for name, sub in (schema.get("properties") or {}).items():
            sub_schema = resolve(document, sub)
            named = name in values and "enum" not in sub_schema
            if named:
                out[name] = values[name]
            elif name in schema.get("required", []):
                out[name] = minimal(document, sub_schema, values)
        return out
    if kind == "array":
        count = schema.get("minItems", 0)
        return [minimal(document, schema.get("items", {}), values) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    return {}
