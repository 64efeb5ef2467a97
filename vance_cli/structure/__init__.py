"""The structure tool's service layer: schema registry, text-mode builder, provider schemas, reasons.

Kept import-free on purpose: ``vance_cli.llm.json_call`` imports the pure helper modules
(``provider_schema``, ``reasons``) and must not pull in the registry or TinyDB with them.
Import the pieces from their modules, e.g. ``from vance_cli.structure.service import StructureService``.
"""
