"""Number formats of the UI languages where Django's own do not fit (FORMAT_MODULE_PATH)."""
