"""Benjy: the engine-agency queue engine (spec benjy-engine.txt), serial and in worker mode.

- ``state``: ``benjyState``, the persisted machine data (queue, items, criteria, counters)
- ``config``: recipe params, fail-fast validation, chain templates
- ``handlers``: pure handlers, one per task type, plus inbound translation and safety nets
- ``render``: the bounded controller digest, prompts, journal entries, todos, final synthesis
- ``engine``: the loop (pop → perform → handle → save → effects)
"""
