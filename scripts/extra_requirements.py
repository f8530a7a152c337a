"""Print the requirements of llsvm's optional extras (pyproject.toml, as the installed package's metadata holds
them), one per line: `make test` installs the test extra with them into a .venv whose llsvm is already installed,
without building llsvm a second time (pip install -e ".[test]" would).

    python scripts/extra_requirements.py test [reproduce ...]
"""
import importlib.metadata
import re
import sys


def requirements(extras):
    out = []
    for req in importlib.metadata.requires("llsvm") or []:
        spec, _, marker = req.partition(";")
        m = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if m and m.group(1) in extras:
            out.append(spec.strip())
    return out


if __name__ == "__main__":
    wanted = sys.argv[1:]
    found = requirements(wanted)
    if wanted and not found:
        sys.exit(f"no requirements for the extras {wanted} in llsvm's metadata (is llsvm installed?)")
    print("\n".join(found))
