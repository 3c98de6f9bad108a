"""Installs from registries, git and archives (digests, fetch, lock, atomic swap).
A runtime-level package: imports runtime and everything below it.
"""
