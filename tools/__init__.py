"""Repository tooling (not packaged), in layers.

The base layer, imported by every package and importing none of them: `paths` (the checkout's
folders and settings), `outputs` (the folders tools may write), `notebook` (reading and writing
notebooks), `languages` (`languages.toml`: every language's name, catalogs and site settings),
`phrases` (sentences kept as data, translated with gettext).

The packages: `l10n` (translation tooling), `site` (the static site), `runs` (running notebooks,
measuring), `ci` (checks of the repository); each package's docstring says what it may import.
`tools.l10n` and `tools.site` never import each other's code.

A module with a command line runs as `python -m tools.PACKAGE[.MODULE] --help`; the others say
that they have none.
"""
