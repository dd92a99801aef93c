"""service.channels.webhook."""
