"""Checks of the repository: the notebook lint (`nbcheck`: the conventions as rules), badges,
links and the notebook tables (`links`), the stamps of the sessions that passed (`stamps`), the
runtimes readers open the notebooks in (`runtimes`, their files in `runtime_files`).

    python -m tools.ci.nbcheck [--fix]
    python -m tools.ci.links [--fix]
    python -m tools.ci.stamps status
    python -m tools.ci.runtimes list|plan|install|run|refresh

May import the base layer, `tools.runs.notebooks` (to run notebooks) and `tools.l10n.index` (the
language indexes it checks). `stamps`, `runtimes` and `runtime_files` import the standard library
only at their top (noxfile.py imports them before any environment exists).
"""
