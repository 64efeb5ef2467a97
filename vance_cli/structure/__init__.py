"""The structure tool's service layer: StructureService, the schema registry, the text-mode builder, TinyDB.

Kept import-free on purpose: importing a piece must not pull in the registry or TinyDB with it.
Import the pieces from their modules, e.g. ``from vance_cli.structure.service import StructureService``.
The JSON Schema work below it lives in ``vance_cli.schema``, the provider side in ``vance_cli.llm.output``.
"""
