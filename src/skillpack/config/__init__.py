"""The user and project config files: the schema (pure) and the files (atomic
writes). Imports the base modules and the pure packages.
"""
