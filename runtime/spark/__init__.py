"""The Spark runtime: JobGraphs executed with PySpark (imported lazily, only here)."""
