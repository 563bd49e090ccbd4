""""My memories": an end user's own long-term memory items, and nobody else's, one module per page or action
group (``web.urls`` names each view).

Every view starts from ``common.own_items`` (``ltm.store.selectors.own_memories`` of the signed-in user's
platform id), so an id in the URL that belongs to someone else is a 404 and nothing changes.
"""
