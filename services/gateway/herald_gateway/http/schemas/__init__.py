"""Request and response bodies, as the OpenAPI document shows them: one module per resource, beside its routes."""
