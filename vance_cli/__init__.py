"""Vance: a terminal-first agent console."""

__version__ = "0.1.0"
