"""The Sphinx configuration of every language's project of the site.

`tools.site.build` runs sphinx-build with `-c tools/site` (this file) and the environment variable
`TPU_SITE_CONFIG`: the path of the project's `conf.json`, which it writes beside each project
with that language's values (`sphinx_values` there: the language, the title, the folders to leave
out, where its notebooks are on GitHub). Sphinx executes this file; nothing imports it.

myst-nb renders the notebooks as they are (`nb_execution_mode = "off"`: nothing runs);
sphinx-book-theme gives the navigation, the search box and a Colab launch button.
"""

import json
import os
from pathlib import Path

if __name__ == "__main__":
    raise SystemExit(
        "tools.site.conf has no command line: sphinx-build reads it (tools.site.build)."
    )
if "TPU_SITE_CONFIG" not in os.environ:
    raise RuntimeError(
        "TPU_SITE_CONFIG is not set: it names a project's conf.json, as `python -m tools.site "
        "build` writes it and runs sphinx-build"
    )

_values_file = Path(os.environ["TPU_SITE_CONFIG"])
_values = json.loads(_values_file.read_text(encoding="utf-8"))

project = _values["project"]
language = _values["language"]
extensions = ["myst_nb"]
nb_execution_mode = "off"
nb_merge_streams = False  # tools.site.pages.merge_streams did it, keeping the order of the outputs
exclude_patterns = _values["exclude_patterns"]
html_theme = "sphinx_book_theme"
html_title = _values["html_title"]
# The project's own `_static/` (tools/site/static/, copied there): the badge images of its pages
# come from it too.
html_static_path = [str(_values_file.parent / "_static")]
html_css_files = ["site.css"]
html_theme_options = {
    "repository_url": _values["repository_url"],
    "repository_branch": _values["repository_branch"],
    "path_to_docs": _values["path_to_docs"],
    "use_repository_button": True,
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    # Without it every page ends "By Author name not set": the notebooks have no author.
    "footer_content_items": ["last-updated.html"],
}

# Sphinx 9.0.4 names the search's JavaScript stemmer after the language, `ChineseStemmer`, which
# does not exist (Chinese uses the English stemmer): search fails in the browser. Fixed upstream
# after 9.0.4 (sphinx-doc/sphinx#14229, #14416); drop this with the next Sphinx pin.
if language.startswith("zh"):
    from sphinx.search import zh as _zh

    _zh.SearchChinese.language_name = "English"  # window.Stemmer = EnglishStemmer
