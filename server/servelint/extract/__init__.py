"""Extractors: one module per host format, each turning a document into `Launch`es
whose tokens carry exact spans into the original text."""
