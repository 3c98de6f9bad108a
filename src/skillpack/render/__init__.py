"""PURE. Values into model context: the catalog under its budget, injections,
substitutions, tool filters. Imports only the base modules, `parse` and `select`.
"""
