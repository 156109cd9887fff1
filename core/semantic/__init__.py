"""Semantic recall: the local embedding model and the vectors of indexed passages."""

# The cache's dir of vector files, here so that opening a cache (core/archive/store.py)
# names it without loading the vector code.
VECTORS_DIR = "vectors"
