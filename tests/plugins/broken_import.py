"""A plugin that fails to import: the engine must report it by name and carry on."""

raise ImportError("this plugin is broken on purpose")
