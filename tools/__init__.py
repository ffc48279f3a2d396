"""Developer tools: notebook hygiene, headless execution, localization."""
