"""Everything that prints: rich console observers, trace renderers, JSON and Markdown writers."""
