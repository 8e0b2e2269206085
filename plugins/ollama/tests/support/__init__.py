"""Test support of memoweave-ollama: llama.cpp backends and the Ollama protocol server."""
