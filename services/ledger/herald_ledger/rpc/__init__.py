"""LedgerService's RPCs, one module per area; `servicer.LedgerServicer` composes them."""
