"""The webhook-sender: pulls webhook work from JetStream and delivers it."""
