"""Persistence: one JSON file per process, atomic writes, one writer at a time."""
