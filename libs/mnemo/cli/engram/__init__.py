"""`mnemo import --from-engram`: a complete, verified pull of a live Engram project."""
