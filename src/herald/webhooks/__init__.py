"""Webhook rules both the gateway (when a URL or schedule is submitted) and the
webhook-sender (when it sends) apply: which targets may be reached, and the retry policy."""
