"""Logs, metrics and traces, set up the same way in every service."""

from herald.telemetry.logging import configure_logging, get_logger
from herald.telemetry.metrics import start_metrics_server
from herald.telemetry.tracing import configure_tracing, tracer

__all__ = ["configure_logging", "configure_tracing", "get_logger", "start_metrics_server", "tracer"]
