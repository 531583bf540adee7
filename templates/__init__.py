"""benchsite's default theme (Jinja templates and static assets), shipped inside the package."""
