"""The LLM layer's work on the wiki: consolidation and the reviewed learning loop.

Hooks never import it."""
