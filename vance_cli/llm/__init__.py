"""The model layer: one ChatModel interface; litellm, direct OpenAI-compatible, scripted and function models."""
