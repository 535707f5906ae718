"""Optional LLM providers. Nothing on the hook path or the query hot path imports this."""
