"""Adapters that repair tool calls where agents already run, one import away each.

- ``toolmend.integrations.langchain``: an agent middleware for LangChain v1's ``create_agent``
  and ``repair_ai_message`` for ``AIMessage`` objects (``pip install toolmend[langchain]``).
- ``toolmend.integrations.pydantic_ai``: ``ToolmendModel``, a pydantic-ai ``WrapperModel``
  (``pip install toolmend[pydantic-ai]``).
- ``toolmend.integrations.openai_agents``: ``ToolmendModel`` and ``ToolmendModelProvider`` for
  the OpenAI Agents SDK (``pip install toolmend[openai-agents]``).
- ``toolmend.integrations.litellm``: ``ToolmendGuardrail`` for the LiteLLM proxy's
  ``config.yaml`` and ``ToolmendCallback`` for ``litellm.completion`` in process
  (``pip install toolmend[litellm]``).

Each module imports its framework when it is imported, and only then; this package imports none.
"""
