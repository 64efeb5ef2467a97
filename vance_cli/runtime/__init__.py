"""The local runtime: creates, locks, loads and drives processes; one event stream per run."""
