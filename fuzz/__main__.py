"""python -m fuzz: see fuzz/runner.py."""
import sys

from fuzz.runner import main

sys.exit(main())
