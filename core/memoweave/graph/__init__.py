"""Graph memory helpers shared by the write path and retrieval: entity and relationship
names, and the offline linking of a text's entities (no LLM). Below ``retrieval`` and
``memory``; imports only ``index`` and ``providers``."""
