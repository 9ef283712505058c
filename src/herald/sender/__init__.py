"""The delivery loop the webhook- and email-senders share (`herald.sender.loop`)."""
