"""The fault sweep's classes (`scripts/fault_sweep.py` runs them): one module each."""
