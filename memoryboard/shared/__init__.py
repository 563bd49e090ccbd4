"""What the surfaces (``web``, ``admin``, ``api``, ``mcp_server``) share: the one error shape, token
authentication, items described in words. It imports none of them, so they stay independent."""
