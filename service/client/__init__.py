"""The `kontor` command: a pure HTTP client for players and hosts.

It keeps Ed25519 identities in a local key file (`keystore`), signs bearer and order
tokens with them, and talks to the service over HTTP (`http`). It never imports the
server (Flask, Redis, RQ), so it runs anywhere the service's public API is reachable.
"""
