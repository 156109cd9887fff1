"""The BM25 index: immutable segments of postings, their vocabulary, and the tokenizer.

Knows nothing of files, agents or sessions: it takes documents and answers scored hits.
"""
