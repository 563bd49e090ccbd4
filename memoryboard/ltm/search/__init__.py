"""Finding items: embeddings, the vector cache, the HNSW index, the one ranking function, retrieval,
retrieval receipts and the access log. Imports ``store`` (below), never ``write`` or ``people``."""
