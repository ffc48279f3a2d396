"""The site's own words (page header, language index, titles) in every language of the site.

The notebooks' text comes from their PO catalogs; these few sentences are the site's, written by
`tools/site_pages.py` around the notebooks. Each language has every key of `ENGLISH` except
`origin_source` (only English pages show the run's own notebook), and no `{placeholder}` that the
English sentence lacks (a translation may name its language itself); `tests/test_site.py` checks
both. Terms follow each language's `notebooks/<lang>/po/GLOSSARY.md`
(headless, notebook, parameters). A language without an entry here is shown in English.
"""

from __future__ import annotations

import string

ENGLISH = {
    "title": "Train TensorFlow models on TPUs",
    "languages": "Languages",
    "all_languages": "all notebooks, all languages",
    "origin_source": "These are the outputs of one headless run of {notebook}.",
    "origin_translated": (
        "The code cells are the English notebook's, so these are the outputs of its headless "
        "run; the text is translated from {catalog} (paragraphs not yet translated are shown in "
        "English)."
    ),
    "parameters_none": "Parameters: the notebook's defaults (papermill injected none).",
    "parameters": (
        "Parameters (injected by papermill; the rest are the notebook's defaults): {values}."
    ),
    "not_recorded": (
        "Hardware and software: not recorded (executed {when}, before the runner recorded them; "
        "running the notebook again records them)."
    ),
    "unknown_date": "at an unknown date",
    "run_on": "Run on {date} UTC",
    "hardware": "hardware: {platform}, {cpus} CPUs, accelerator: {accelerator}",
    "software": "software: Python {python}, {packages}",
    "environment": "environment: {environment}",
    "separator": "; ",
    "end": ".",
    "index_intro": (
        "Every notebook of the curriculum in {language}, with the outputs of its last headless "
        "run: each page says which parameters, machine and software produced them. The badges "
        "open the notebook in Colab."
    ),
    "column_notebook": "notebook",
}

TRANSLATIONS: dict[str, dict[str, str]] = {
    "de": {
        "title": "TensorFlow-Modelle auf TPUs trainieren",
        "languages": "Sprachen",
        "all_languages": "alle Notebooks, alle Sprachen",
        "origin_translated": (
            "Die Codezellen sind die des englischen Notebooks, daher stammen diese Ausgaben aus "
            "dessen Lauf ohne Oberfläche (headless); der Text ist aus {catalog} übersetzt (noch "
            "nicht übersetzte Absätze erscheinen auf Englisch)."
        ),
        "parameters_none": (
            "Parameter: die Standardwerte des Notebooks (papermill hat keine eingefügt)."
        ),
        "parameters": (
            "Parameter (von papermill eingefügt; alle übrigen sind die Standardwerte des "
            "Notebooks): {values}."
        ),
        "not_recorded": (
            "Hardware und Software: nicht aufgezeichnet (ausgeführt {when}, bevor der Runner sie "
            "aufzeichnete; ein erneuter Lauf des Notebooks zeichnet sie auf)."
        ),
        "unknown_date": "zu einem unbekannten Zeitpunkt",
        "run_on": "Ausgeführt am {date} UTC",
        "hardware": "Hardware: {platform}, {cpus} CPUs, Beschleuniger: {accelerator}",
        "software": "Software: Python {python}, {packages}",
        "environment": "Umgebung: {environment}",
        "separator": "; ",
        "end": ".",
        "index_intro": (
            "Alle Notebooks des Kurses auf Deutsch, mit den Ausgaben ihres letzten Laufs ohne "
            "Oberfläche (headless): Jede Seite nennt die Parameter, die Maschine und die Software, "
            "die sie erzeugt haben. Die Badges öffnen das Notebook in Colab."
        ),
        "column_notebook": "Notebook",
    },
    "it": {
        "title": "Addestrare modelli TensorFlow sulle TPU",
        "languages": "Lingue",
        "all_languages": "tutti i notebook, tutte le lingue",
        "origin_translated": (
            "Le celle di codice sono quelle del notebook inglese, quindi questi sono gli output "
            "della sua esecuzione headless; il testo è tradotto da {catalog} (i paragrafi non "
            "ancora tradotti compaiono in inglese)."
        ),
        "parameters_none": (
            "Parametri: i valori predefiniti del notebook (papermill non ne ha inseriti)."
        ),
        "parameters": (
            "Parametri (inseriti da papermill; gli altri sono i valori predefiniti del notebook): "
            "{values}."
        ),
        "not_recorded": (
            "Hardware e software: non registrati (eseguito {when}, prima che il runner li "
            "registrasse; eseguire di nuovo il notebook li registra)."
        ),
        "unknown_date": "in una data sconosciuta",
        "run_on": "Eseguito il {date} UTC",
        "hardware": "hardware: {platform}, {cpus} CPU, acceleratore: {accelerator}",
        "software": "software: Python {python}, {packages}",
        "environment": "ambiente: {environment}",
        "separator": "; ",
        "end": ".",
        "index_intro": (
            "Tutti i notebook del percorso in italiano, con gli output della loro ultima "
            "esecuzione headless: ogni pagina indica quali parametri, macchina e software li "
            "hanno prodotti. I badge aprono il notebook in Colab."
        ),
        "column_notebook": "notebook",
    },
    "zh-cn": {
        "title": "在 TPU 上训练 TensorFlow 模型",
        "languages": "语言",
        "all_languages": "所有笔记本，所有语言",
        "origin_translated": (
            "代码单元与英文笔记本相同，因此这些是其无界面（headless）运行的输出；文字译自 "
            "{catalog}（尚未翻译的段落以英文显示）。"
        ),
        "parameters_none": "参数：笔记本的默认值（papermill 未注入任何参数）。",
        "parameters": "参数（由 papermill 注入；其余为笔记本的默认值）：{values}。",
        "not_recorded": (
            "硬件和软件：未记录（执行于 {when}，早于运行器开始记录；重新运行笔记本即可记录）。"
        ),
        "unknown_date": "未知日期",
        "run_on": "运行于 {date} UTC",
        "hardware": "硬件：{platform}，{cpus} 个 CPU，加速器：{accelerator}",
        "software": "软件：Python {python}，{packages}",
        "environment": "环境：{environment}",
        "separator": "；",
        "end": "。",
        "index_intro": (
            "本课程的所有简体中文笔记本，附带其最近一次无界面（headless）运行的输出：每一页都注明"
            "产生这些输出的参数、机器和软件。徽章可在 Colab 中打开笔记本。"
        ),
        "column_notebook": "笔记本",
    },
    "ja": {
        "title": "TPU で TensorFlow モデルをトレーニングする",
        "languages": "言語",
        "all_languages": "すべてのノートブック、すべての言語",
        "origin_translated": (
            "コードセルは英語のノートブックと同じなので、これはそのヘッドレス実行の出力です。"
            "テキストは {catalog} から翻訳されています"
            "（まだ翻訳されていない段落は英語で表示されます）。"
        ),
        "parameters_none": (
            "パラメータ: ノートブックのデフォルト値（papermill は何も注入していません）。"
        ),
        "parameters": (
            "パラメータ（papermill が注入。その他はノートブックのデフォルト値）: {values}。"
        ),
        "not_recorded": (
            "ハードウェアとソフトウェア: 記録なし（{when}に実行。"
            "ランナーが記録を始める前の実行です。"
            "ノートブックを再実行すると記録されます）。"
        ),
        "unknown_date": "不明な日時",
        "run_on": "実行日時: {date} UTC",
        "hardware": "ハードウェア: {platform}、CPU {cpus} 個、アクセラレータ: {accelerator}",
        "software": "ソフトウェア: Python {python}、{packages}",
        "environment": "環境: {environment}",
        "separator": "。",
        "end": "。",
        "index_intro": (
            "このカリキュラムの日本語のすべてのノートブックと、その最新のヘッドレス実行の出力です。"
            "各ページに、出力を生成したパラメータ、マシン、ソフトウェアを記載しています。"
            "バッジをクリックすると Colab でノートブックが開きます。"
        ),
        "column_notebook": "ノートブック",
    },
    "ko": {
        "title": "TPU에서 TensorFlow 모델 학습하기",
        "languages": "언어",
        "all_languages": "모든 노트북, 모든 언어",
        "origin_translated": (
            "코드 셀은 영어 노트북과 같으므로 이 출력은 영어 노트북의 헤드리스 실행 결과입니다. "
            "텍스트는 {catalog}에서 번역했습니다(아직 번역되지 않은 단락은 영어로 표시됩니다)."
        ),
        "parameters_none": "매개변수: 노트북의 기본값(papermill이 주입한 값 없음).",
        "parameters": "매개변수(papermill이 주입, 나머지는 노트북의 기본값): {values}.",
        "not_recorded": (
            "하드웨어 및 소프트웨어: 기록 없음({when} 실행, 러너가 기록하기 전의 실행입니다. "
            "노트북을 다시 실행하면 기록됩니다)."
        ),
        "unknown_date": "알 수 없는 날짜에",
        "run_on": "실행 일시: {date} UTC",
        "hardware": "하드웨어: {platform}, CPU {cpus}개, 가속기: {accelerator}",
        "software": "소프트웨어: Python {python}, {packages}",
        "environment": "환경: {environment}",
        "separator": "; ",
        "end": ".",
        "index_intro": (
            "이 커리큘럼의 모든 한국어 노트북과 마지막 헤드리스 실행의 출력입니다. 각 페이지에 "
            "출력을 만든 매개변수, 머신, 소프트웨어가 나와 있습니다. 배지를 누르면 Colab에서 "
            "노트북이 열립니다."
        ),
        "column_notebook": "노트북",
    },
    "es-419": {
        "title": "Entrenar modelos de TensorFlow en TPU",
        "languages": "Idiomas",
        "all_languages": "todos los notebooks, todos los idiomas",
        "origin_translated": (
            "Las celdas de código son las del notebook en inglés, así que estos son los resultados "
            "de su ejecución sin interfaz (headless); el texto está traducido de {catalog} (los "
            "párrafos que aún no se tradujeron se muestran en inglés)."
        ),
        "parameters_none": (
            "Parámetros: los valores predeterminados del notebook (papermill no inyectó ninguno)."
        ),
        "parameters": (
            "Parámetros (inyectados por papermill; el resto son los valores predeterminados del "
            "notebook): {values}."
        ),
        "not_recorded": (
            "Hardware y software: sin registrar (ejecutado {when}, antes de que el ejecutor los "
            "registrara; volver a ejecutar el notebook los registra)."
        ),
        "unknown_date": "en una fecha desconocida",
        "run_on": "Ejecutado el {date} UTC",
        "hardware": "hardware: {platform}, {cpus} CPU, acelerador: {accelerator}",
        "software": "software: Python {python}, {packages}",
        "environment": "entorno: {environment}",
        "separator": "; ",
        "end": ".",
        "index_intro": (
            "Todos los notebooks del curso en español, con los resultados de su última "
            "ejecución sin interfaz (headless): cada página indica qué parámetros, máquina y "
            "software los produjeron. Las insignias abren el notebook en Colab."
        ),
        "column_notebook": "notebook",
    },
    "pt-br": {
        "title": "Treinar modelos do TensorFlow em TPUs",
        "languages": "Idiomas",
        "all_languages": "todos os notebooks, todos os idiomas",
        "origin_translated": (
            "As células de código são as do notebook em inglês, então estas são as saídas da "
            "execução headless (sem interface) dele; o texto foi traduzido de {catalog} (os "
            "parágrafos ainda não traduzidos aparecem em inglês)."
        ),
        "parameters_none": (
            "Parâmetros: os valores padrão do notebook (o papermill não injetou nenhum)."
        ),
        "parameters": (
            "Parâmetros (injetados pelo papermill; os demais são os valores padrão do notebook): "
            "{values}."
        ),
        "not_recorded": (
            "Hardware e software: não registrados (executado {when}, antes de o executor passar a "
            "registrá-los; executar o notebook de novo os registra)."
        ),
        "unknown_date": "em data desconhecida",
        "run_on": "Executado em {date} UTC",
        "hardware": "hardware: {platform}, {cpus} CPUs, acelerador: {accelerator}",
        "software": "software: Python {python}, {packages}",
        "environment": "ambiente: {environment}",
        "separator": "; ",
        "end": ".",
        "index_intro": (
            "Todos os notebooks do curso em português, com as saídas da última execução headless "
            "(sem interface): cada página informa quais parâmetros, máquina e software as "
            "produziram. Os selos abrem o notebook no Colab."
        ),
        "column_notebook": "notebook",
    },
}


def text(lang: str, key: str, **values: object) -> str:
    """The site's sentence `key` in `lang` (English where the language has none), filled in."""
    template = TRANSLATIONS.get(lang, {}).get(key, ENGLISH[key])
    return template.format(**values) if values else template


def placeholders(template: str) -> set[str]:
    """The `{names}` a template fills in."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


if __name__ == "__main__":
    raise SystemExit("tools.site_text has no command line: the other tools import it.")
