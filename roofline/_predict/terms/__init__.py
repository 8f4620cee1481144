"""The time model's terms, one module each."""
