"""The gateway: Herald's front door over HTTP and gRPC, both thin over the same handlers."""
