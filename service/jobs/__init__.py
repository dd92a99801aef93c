"""service.jobs."""
