"""Database access: the engine, one module per table, and the queries."""
