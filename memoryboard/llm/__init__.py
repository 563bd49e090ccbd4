"""Model clients: chat, summaries, embeddings and memory extraction, online or offline.

Everything here is framework-free except :mod:`memoryboard.llm.factory`, which builds the configured
models from Django settings. Import the submodules directly; this package imports nothing heavy.
"""

from memoryboard.llm.errors import LLMError

__all__ = ["LLMError"]
