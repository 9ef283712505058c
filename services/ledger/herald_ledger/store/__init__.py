"""Queries, one module per aggregate. Every write that may concern many jobs takes
a batch and runs as one statement per kind of change inside one transaction."""
