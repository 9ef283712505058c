"""Herald's shared kernel: configuration, bus, crypto, telemetry, gRPC helpers and generated stubs."""
