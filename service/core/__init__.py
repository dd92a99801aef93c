"""service.core."""
