"""air: Accelerator Integration Readiness."""

__version__ = "0.1.0"
