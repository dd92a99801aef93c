"""Tests of the job layer: the sweep, and what survives a killed process."""
