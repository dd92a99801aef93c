"""service.channels.inbound."""
