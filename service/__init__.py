"""The Flask API of Kontor (issue 3)."""
