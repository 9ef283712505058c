"""The router: priority and event fan-out between the gateway and the ledger (which admits the jobs)."""
