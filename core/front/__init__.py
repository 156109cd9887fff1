"""Front ends over :class:`core.api.Archive`: the scripting CLI, the MCP server and the
HTTP API. Thin: parse arguments, call the API, shape the answer. (The terminal app is
the ``tui`` package beside ``core``.)"""
