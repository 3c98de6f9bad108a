"""Per-conversation state over a catalog: Session, the permission gate, SkillTools,
the workspace. Imports discovery, index, config and everything below them.
"""
