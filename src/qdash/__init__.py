"""QDash Copilot: chat with superconducting-qubit calibration data. See README.md for the layout."""

__version__ = "0.1.0"
