"""The structure service: a validated JSON object from text (`vance structure`, the structure tool).

``service.py`` (StructureService: the content stage and its reason loop), ``registry.py`` (named
schemas, per scope) with ``db.py`` (its TinyDB store), ``builder.py`` (text mode's schema builder)
and ``errors.py`` (SchemaNotFound). The schema check and the validation reasons are the floor below
(``vance_cli.schema``), the provider-side schemas and the JSON call the model layer's
(``vance_cli.llm.output``).

Kept import-free on purpose: importing one piece must not pull in the registry or TinyDB with it.
Import the pieces from their modules, e.g. ``from vance_cli.structure.service import StructureService``.
"""
