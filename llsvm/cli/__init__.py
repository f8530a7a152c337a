"""Command-line interfaces (Click). They parse options, call llsvm, and format output: no array code here."""
