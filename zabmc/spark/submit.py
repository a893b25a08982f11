"""Entry point for `spark-submit`, which needs a Python file to run:

    spark-submit --master spark://HOST:7077 --py-files zabmc.zip \
        "$(python -c 'import zabmc.spark.submit as m; print(m.__file__)')" \
        check --engine spark --nodes 3 --depth 24

The arguments after the file are `zabmc`'s. The session spark-submit prepared is used as is; a
`--master` given to `zabmc check` as well must name the same master.
"""

from zabmc.cli import main

if __name__ == "__main__":
    main()
