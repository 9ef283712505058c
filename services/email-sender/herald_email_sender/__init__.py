"""The email-sender: delivers tenant and platform email through each tenant's ordered provider list."""
