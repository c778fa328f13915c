"""Small data files shipped with the package (see README.md in this directory)."""
