"""gRPC plumbing shared by every service: servers with health, reflection and
telemetry; client channels; errors with rich status details."""
