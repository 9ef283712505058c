"""The router: admission between the gateway and the ledger, and the publisher of work to JetStream."""
