"""llm-serve: an LLM serving system (TP GPUs, host, KV-cache tier) on the llm-serve family's scale."""
