"""The app's screens: the chat, and the live view of a run (Benjy or a worker)."""
