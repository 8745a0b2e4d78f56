from breakscan.cli import entry_point

entry_point()
