"""service.channels."""
