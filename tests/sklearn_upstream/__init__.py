"""scikit-learn's own SVM tests with llsvm's classes substituted (issue 45): the pytest plugin that
scripts/sklearn_upstream.py loads into a pytest of its own (plugin.py) and the known failures
(known_failures.tsv) that tests/test_sklearn_upstream.py checks. Holds no tests: the suite's pytest collects nothing
here."""
