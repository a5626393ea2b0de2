"""The extractor stage service: raw adds -> extract -> the next step's topic."""
