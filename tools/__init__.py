"""Repository tooling (not packaged): a module with a command line runs as
`python -m tools.NAME --help`; the others say that they have none."""
