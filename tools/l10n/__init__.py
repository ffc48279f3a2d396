"""Translation tooling: the PO catalogs of the notebooks and of the site's sentences, the
localized notebooks built from them, the glossaries, the language indexes.

    python -m tools.l10n extract|build|check|report    (the commands: `tools.l10n.cli`)

May import the base layer (`tools.paths`, `tools.outputs`, `tools.notebook`, `tools.languages`,
`tools.phrases`) and itself; never `tools.site` (the site's sentences are data, read through
`tools.phrases`). `check` runs the repository's link checks, `tools.ci.links`, imported where it
runs them. `tools.site` and `tools.ci` may import this package.
"""
