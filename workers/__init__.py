"""RQ jobs of Kontor (issue 3)."""
