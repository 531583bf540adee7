"""What the built-in analyses and pages share, in one place: building and wording findings
(:mod:`.findings`), their charts (:mod:`.charts`) and the pieces several pages render
(:mod:`.pages`). Not a plugin (the leading underscore keeps it out of plugin discovery) and not a
public API: a third-party plugin uses :mod:`benchsite`, :mod:`benchsite.tables` and
:mod:`benchsite.site` instead."""
