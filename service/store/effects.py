"""The store's side of post-commit effects (see `service.jobs.sweep`): filled in below."""

from __future__ import annotations


class Effects:
    """Mixin of `Store`: what a commit's side effects need from the store."""
