"""`vance demo`: every capability, for real, offline; only the model's words are scripted (run.py, brain.py)."""
