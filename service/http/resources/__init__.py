"""service.http.resources."""
