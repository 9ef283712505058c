"""The ledger's RPCs, one module per area; `herald_ledger.servicer` composes them into one servicer per service."""
