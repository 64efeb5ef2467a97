"""JSON Schema without model knowledge: dialects, refs, the schema check, local validation and its reasons.

Floor 4, below ``llm``: nothing here knows a provider or a model. ``dialects`` reads ``$schema``
and rewrites older drafts into 2020-12; ``refs`` resolves every ``$ref`` and holds the one cycle
finder; ``check`` is the schema check every entry point runs; ``reasons`` validates an answer and
words what is wrong (spec structure-tool §4.1); ``quick`` says yes to plainly valid tool arguments
without importing jsonschema.
"""
