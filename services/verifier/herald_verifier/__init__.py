"""The verifier: receives inbound provider webhooks and believes none before its signature checks out."""
