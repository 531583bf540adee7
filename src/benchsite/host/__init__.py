"""The plugin host: the plugin manager, the registry of what plugins contribute, the checks
of the records they return, and the configuration file.
"""
