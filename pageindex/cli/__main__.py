"""``python -m pageindex.cli``: the ``pageindex`` command without needing it on PATH (tests use this)."""

from pageindex.cli import main

if __name__ == "__main__":
    main()
