"""The structure service: a validated JSON object from text (`vance structure`, the structure tool).

``service.py`` (StructureService: the content stage and its reason loop), ``registry.py`` (named
schemas, per scope) with ``db.py`` (its TinyDB store), ``builder.py`` (text mode's schema builder)
and ``errors.py`` (schema checks and their errors). The provider-side schemas and the validation
reasons belong to the model layer (``vance_cli.llm``).

Kept import-free on purpose: modules of the model layer import ``errors`` (schema checks) and must
not pull in the registry or TinyDB with it. Import the pieces from their modules, e.g.
``from vance_cli.structure.service import StructureService``.
"""
