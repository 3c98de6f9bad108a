"""PURE. Which skill a message or call means: mentions, slash commands, resolution,
name collisions, rule matching. Imports only the base modules and `parse`.
"""
