"""``python -m declinecraft.explore report params/<run>.yaml [--out FILE]``: write the static explorer
page of a run (``make report``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from declinecraft.explore.frame import resolve
from declinecraft.explore.report import write_report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (1 when the run's outputs are missing or wrong)."""
    parser = argparse.ArgumentParser(
        prog="python -m declinecraft.explore", description="Write the static HTML explorer of a run."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="write outputs/<run>/explorer/index.html")
    rep.add_argument("params_file")
    rep.add_argument("--out", type=Path, default=None, help="file to write instead")
    args = parser.parse_args(argv)
    try:
        path = write_report(resolve(args.params_file), out=args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
