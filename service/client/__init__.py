"""The `kontor` command: a pure HTTP client for players and hosts.

It keeps Ed25519 identities in a local key file (`keystore`), signs bearer and order
tokens with them, and talks to the service over HTTP (`http`). `words` holds the plain
words it shares with the service's mails and webhooks (names, sentences, rankings); the
titles' own words come from the pure engine (`engine.core.registry`). It never imports the
server (Flask, Redis, RQ), so it runs anywhere the service's public API is reachable.
"""
