"""Everything stored about one person, across every table: the support overview, export and erase."""
