"""I/O. The filesystem seam: roots, the bounded walk, loading, snapshot replay,
bundled-file access and the in-memory twin. Imports the pure packages and `index`.
"""
