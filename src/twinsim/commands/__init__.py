"""CLI commands beyond the core ones in `twinsim.cli`, one module each.

Every module here (except `common`) defines `register(app)`, which adds its command(s) to the
typer app; `twinsim.cli` discovers them, so a new command touches no shared file.
"""
