"""I/O. The SQLite file: the parse and walk cache, FTS5 search (its query building is
pure). Imports the base modules and the pure packages; never `discovery`.
"""
