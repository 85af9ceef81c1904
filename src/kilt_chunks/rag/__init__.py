"""Retrieval-augmented generation over ``kilt_chunks``: dense and reranked
retrieval (``kilt-chunks embed``, ``dense``, ``rerank``, ``fuse``) and the
measures of what a language model gets from a run.

One module per command; the heavy libraries (torch, sentence-transformers,
faiss, Ray) are the ``rag`` extra (``pip install -e '.[rag]'``) and are
imported only inside the functions that need them, so the rest of the
package does not depend on them.
"""

__all__: list[str] = []
