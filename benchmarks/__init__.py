"""Benchmarks: run explicitly (scripts/bench), never part of the default test run."""
