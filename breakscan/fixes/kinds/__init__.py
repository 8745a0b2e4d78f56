"""One small suggester per kind of break; each returns a `Rewrite` or None when its construct is
not at the finding or cannot be rewritten safely."""
