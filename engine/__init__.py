"""Kontor's pure rules engine: game titles, their data files and bots.

Nothing here touches the network, the clock, a database or global randomness; the
service and the workers drive it through the contract in `engine.core`.
"""
