"""Tools: name, description, JSON Schema parameters, async run; arguments validated before running."""
