"""Surface: skills in the agent frameworks people already use, one module per framework,
each imported only when used and each an optional extra.

`pydantic_ai` (`skillpack[pydantic-ai]`: a toolset and a capability), `openai_agents`
(`skillpack[openai-agents]`: `FunctionTool`s and dynamic instructions), `langchain`
(`skillpack[langchain]`: `BaseTool`s and the system prompt). `_skills.Skills` is what
they share: one session, its tools, the budgeted catalog and turn preparation, with
`a*` twins that run the sync core on a worker thread. Imports runtime and below.
"""
