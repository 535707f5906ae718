"""The always-on per-user service: a systemd user unit on Linux, a launchd agent on macOS.

Everything here takes the platform, the environment and the interpreter as explicit
values (a :class:`~ai_memory.service.spec.Host`), so a Linux test renders and installs
the macOS agent into a temporary home exactly as a Mac would.
"""
