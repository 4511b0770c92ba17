"""``python -m yangkey.cli``: the ``yangkey`` command."""

from yangkey.cli.root import main

if __name__ == "__main__":
    main()
