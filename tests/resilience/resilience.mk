# The resilience suite (tests/resilience/README.md): the real stack as separate processes,
# on a PostgreSQL and a nats-server of its own, checked for invariants under faults, hostile
# input, cross-tenant calls and forged inbound webhooks.
#
# `make test` runs the reduced version (ordinary tests collected from tests/). This target runs
# the full version: thousands of jobs, every service killed one at a time, longer fuzzing and
# slow-client runs. The profile is chosen by RESILIENCE_PROFILE (not a HERALD_* variable: the
# test session clears those); tests/resilience/profile.py holds the figures of both.
.PHONY: test-resilience
test-resilience: $(VENV)/.installed
	RESILIENCE_PROFILE=full $(VENV)/bin/pytest -q tests/resilience $(PYTEST_ARGS)
