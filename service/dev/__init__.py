"""service.dev."""
