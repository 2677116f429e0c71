"""`python -m air` and the `air` command. The CLI is imported inside `run`, so that an
interrupt while it loads ends like one during a check: one line and exit code 130."""

import sys

from air.errors import EXIT_INTERRUPTED


def run() -> None:
    try:
        from air.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("air: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    main()


if __name__ == "__main__":
    run()
