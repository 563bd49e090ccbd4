"""Long-term memory, in four layers; each imports only the layers below it (docs/architecture.md).

- ``people``: everything stored about one person, exported or erased.
- ``write``: what decides what is stored: extraction, reconcile, review, import, the agent's memory tools,
  edits from any surface.
- ``search``: embeddings, the vector cache and HNSW index, ranking, retrieval, receipts, the access log.
- ``store``: plain reads and writes of the tables: items and their states, namespaces' queries, versions,
  expiry, locks, the erase gate.
"""
