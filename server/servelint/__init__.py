"""servelint: find SGLang launch commands in the files a team keeps and lint their flags."""

__version__ = "0.1.0"
