# The TypeScript SDK (clients/typescript): its packages, from its lock, before the tests run it.
TEST_PREREQS += clients-typescript

.PHONY: clients-typescript
clients-typescript:
	@test -d clients/typescript/node_modules || (cd clients/typescript && npm ci --no-audit --no-fund)
