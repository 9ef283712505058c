"""One module per email provider, each speaking that provider's documented API."""
