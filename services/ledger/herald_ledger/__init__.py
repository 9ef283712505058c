"""The ledger: Herald's canonical state in PostgreSQL, the only service that opens a database connection."""
