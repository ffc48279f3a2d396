"""The static site of the executed notebooks: one Sphinx project per language (`build`), its
pages, headers, switcher and indexes (`pages`), its own sentences as data
(`sentences.toml`, translated in `notebooks/<lang>/po/_site.po`). Beside the code: the Jinja2
templates of the pages (`templates/`), the site's CSS and badge images (`static/`), and the
Sphinx configuration of every language's project (`conf.py`, which sphinx-build reads).

    python -m tools.site build [--lang LANG]

May import the base layer (`tools.paths`, `tools.outputs`, `tools.notebook`, `tools.languages`,
`tools.phrases`, which reads its sentences) and, to translate the notebooks' markdown exactly as
the localized notebooks are, `tools.l10n.catalogs` and `tools.l10n.translation`. Nothing
imports this package: the translation tooling reads the sentences file, never this code.
"""
