"""benchsite's built-in plugins: each module here is loaded exactly like a third-party plugin.

Modules whose name starts with an underscore are helpers shared by the built-ins, not plugins.
"""
