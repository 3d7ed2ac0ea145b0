"""benchvault: a results warehouse for LLM-inference benchmarks."""

__version__ = "0.4.5"
