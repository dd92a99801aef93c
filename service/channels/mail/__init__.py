"""service.channels.mail."""
