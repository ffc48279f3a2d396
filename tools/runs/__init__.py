"""Running the notebooks and measuring them: the headless runner and the nbval copies
(`notebooks`), the accuracy margins over seeds (`margins`), the benchmark (`bench`) and the
support table's measurement (`support_table`, its cases in `support_cases`).

    python -m tools.runs.notebooks run|prepare ...
    python -m tools.runs.margins | tools.runs.bench | tools.runs.support_table ...

May import the base layer (`tools.paths`, `tools.outputs`, `tools.notebook`, ...), `tpuhelpers`
and each other; `tools.ci` may import `tools.runs.notebooks` (the runtimes run notebooks with it).
Never `tools.l10n` or `tools.site`.
"""
