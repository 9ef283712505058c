"""The HTTP surface (FastAPI): OpenAPI at /openapi.json, docs at /docs."""
