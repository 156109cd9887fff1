"""Semantic recall: the local embedding model and the vectors of indexed passages."""
