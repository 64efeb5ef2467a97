"""The JSON Schema keywords whose values are subschemas, by shape: the one table every walk uses.

Draft 2020-12 names; ``dialects.upgrade`` turns the older drafts' forms into these. What the older
drafts add is listed apart, for the walks that read a schema before it is upgraded.
"""

from __future__ import annotations

# A single subschema. (``items`` is a list, the tuple form, before 2020-12.)
ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
# A list of subschemas.
LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
# An object of named subschemas.
MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
# Drafts 4 to 2019-09 only: one subschema, and a map whose values are subschemas or name lists.
OLD_ONE = ("additionalItems",)
OLD_MAP = ("dependencies",)
# Where a value is data, never a schema: a "$ref" key inside them is no reference.
NOT_SCHEMAS = ("enum", "const", "default", "examples")
