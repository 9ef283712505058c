"""NATS JetStream: the subjects work travels on, the streams and consumers that
hold it (declared in code, created idempotently at start), and publishing."""
