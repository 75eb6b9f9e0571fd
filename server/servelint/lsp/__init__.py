"""The language server: a thin pygls layer over the engine."""
