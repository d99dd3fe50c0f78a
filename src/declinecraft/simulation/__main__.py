"""``python -m declinecraft.simulation [--scale N]``: :func:`declinecraft.simulation.command.main`."""

from declinecraft.simulation.command import main

if __name__ == "__main__":
    raise SystemExit(main())
