"""`python -m zabmc` runs the command line."""

from zabmc.cli import main

main()
