"""`python -m zabmc` runs the command line; `spark-submit` runs this file the same way
(docs/spark.md: spark-submit needs a Python file, and this is the package's own)."""

from zabmc.cli import main

main()
