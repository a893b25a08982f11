"""`python -m zabmc` runs the command line; `spark-submit` runs this file the same way
(docs/spark.md: spark-submit needs a Python file, and this is the package's own)."""

# first, before any heavy import: SIGINT and SIGTERM exit 130 and 143 with one line, no traceback
from zabmc.core.signals import install_early

install_early()

from zabmc.cli import main  # noqa: E402 - after the signal handlers, on purpose

main()
