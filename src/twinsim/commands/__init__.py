"""The `twinsim …` commands, one module per command or family of commands.

Every module here (except `common`) defines `register(app)`, which adds its command(s) to the
typer app; `twinsim.cli` discovers them, so a new command touches no shared file.
"""
