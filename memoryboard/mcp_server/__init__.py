"""memoryboard as an MCP server (official ``mcp`` SDK): memory tools for the user bound to a token."""
