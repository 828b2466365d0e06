"""Views of the analyst UI, one module per area. Each parses input, calls one
service or selector, and renders a template."""
