"""The strategy playground, one module per page or action group (``web.urls`` names each view): the page
(``page``), the context strategies' columns (``columns``), the memory strategies' plans (``plans``), the
context window (``context_window``) and the replay (``replay``); ``rows`` and ``source`` are what they share.
"""
