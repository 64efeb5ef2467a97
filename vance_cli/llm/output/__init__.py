"""Structured output: the schema each provider family is sent, and the JSON call that uses it.

``walker`` is the one walk over a prepared schema; ``openai``, ``anthropic``, ``gemini`` and
``other`` hold each family's rules beside the documentation they follow; ``plan`` builds the
request shape (``build_plan``) and reads the reply back (``strip_injected_nulls``);
``json_call`` is the content-stage loop shared by the structure tool and Benjy.
"""
