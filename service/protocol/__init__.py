"""service.protocol."""
